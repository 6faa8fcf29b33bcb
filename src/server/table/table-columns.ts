/**
 * The columns kube-apiserver's Table has for each served resource: pods
 * (pod-printer.ts), configmaps (NAME DATA AGE), events (LAST SEEN TYPE
 * REASON OBJECT MESSAGE, and the wide ones), and NAME AGE for any other
 * resource. Columns with priority > 0 are the ones kubectl shows only with
 * `-o wide`; the server always sends every column.
 */
import type { KubeObject } from '../../core/types.js';
import { ageSince } from './human-duration.js';
import { POD_COLUMNS, podCells } from './pod-printer.js';

export interface ColumnDefinition {
  readonly name: string;
  readonly type: string;
  readonly format: string;
  readonly description: string;
  readonly priority: number;
}

export interface TablePrinter {
  readonly columns: readonly ColumnDefinition[];
  cells(object: KubeObject, nowMs: number): unknown[];
}

const NAME: ColumnDefinition = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  priority: 0,
};
const AGE: ColumnDefinition = {
  name: 'Age',
  type: 'string',
  format: '',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
};

const col = (name: string, description: string, priority = 0, type = 'string'): ColumnDefinition => ({
  name,
  type,
  format: '',
  description,
  priority,
});
const size = (v: unknown): number => (v !== null && typeof v === 'object' ? Object.keys(v).length : 0);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const rec = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

const DEFAULT_PRINTER: TablePrinter = {
  columns: [NAME, AGE],
  cells: (o, now) => [o.metadata.name ?? '', ageSince(o.metadata.creationTimestamp, now)],
};

const CONFIGMAP_PRINTER: TablePrinter = {
  columns: [NAME, col('Data', 'Data contains the configuration data.', 0, 'integer'), AGE],
  cells: (o, now) => [
    o.metadata.name ?? '',
    size(o.data) + size(o.binaryData),
    ageSince(o.metadata.creationTimestamp, now),
  ],
};

/** kube's printEvent: ages from lastTimestamp (else eventTime, else creation), the involved object as kind/name. */
const EVENT_PRINTER: TablePrinter = {
  columns: [
    col('Last Seen', 'The time at which the most recent occurrence of this event was recorded.'),
    col('Type', 'Type of this event (Normal, Warning), new types could be added in the future.'),
    col('Reason', "The reason the transition into the object's current status."),
    col('Object', 'The object that this event is about.'),
    col('Subobject', 'The subobject (fieldPath) of the involved object.', 1),
    col('Source', 'The component reporting this event.', 1),
    col('Message', 'A human-readable description of the status of this operation.'),
    col('First Seen', 'The time at which the event was first recorded.', 1),
    col('Count', 'The number of times this event has occurred.', 1, 'integer'),
    { ...NAME, priority: 1 },
  ],
  cells: (o, now) => {
    const involved = rec(o.involvedObject);
    const source = rec(o.source);
    const first = str(o.firstTimestamp) || str(o.eventTime) || o.metadata.creationTimestamp;
    const last = str(o.lastTimestamp) || str(o.eventTime) || first;
    const sourceText = [str(source.component), str(source.host)].filter((s) => s !== '').join(', ');
    return [
      ageSince(last, now),
      str(o.type),
      str(o.reason),
      `${str(involved.kind).toLowerCase()}/${str(involved.name)}`,
      str(involved.fieldPath),
      sourceText,
      str(o.message),
      ageSince(first, now),
      typeof o.count === 'number' ? o.count : 1,
      o.metadata.name ?? '',
    ];
  },
};

const PRINTERS: Readonly<Record<string, TablePrinter>> = {
  pods: { columns: POD_COLUMNS, cells: podCells },
  configmaps: CONFIGMAP_PRINTER,
  events: EVENT_PRINTER,
};

export function tablePrinterFor(resource: string): TablePrinter {
  return PRINTERS[resource] ?? DEFAULT_PRINTER;
}
