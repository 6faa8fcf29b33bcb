/**
 * meta.k8s.io Table objects: a list or one object as rows of cells
 * (table-columns.ts), each row carrying the object as includeObject says
 * (PartialObjectMetadata by default: kubectl needs its metadata for the
 * NAMESPACE and LABELS columns). A watch sends one Table per event, with the
 * column definitions only in the first, as kube-apiserver does; ERROR
 * events keep their Status and BOOKMARKs become an empty Table at their RV.
 */
import type { KubeObject } from '../../core/types.js';
import type { WatchEvent } from '../../wire/watch-event.js';
import type { ResourceSpec } from '../resources.js';
import { specApiVersion } from '../resources.js';
import { tablePrinterFor, type ColumnDefinition } from './table-columns.js';
import type { TableRequest } from './table-request.js';

interface TableRow {
  cells: unknown[];
  object?: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: { resourceVersion?: string; continue?: string };
  columnDefinitions: readonly ColumnDefinition[];
  rows: TableRow[];
}

/** The Content-Type of a Table response. */
export function tableContentType(t: TableRequest): string {
  return `application/json;as=Table;v=${t.version};g=meta.k8s.io`;
}

function rowObject(object: KubeObject, t: TableRequest, spec: ResourceSpec): unknown {
  if (t.includeObject === 'None') return undefined;
  if (t.includeObject === 'Object')
    return { apiVersion: object.apiVersion ?? specApiVersion(spec), kind: object.kind ?? spec.kind, ...object };
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${t.version}`, metadata: object.metadata };
}

export function tableOf(
  objects: readonly KubeObject[],
  listMeta: { resourceVersion?: string; continue?: string },
  t: TableRequest,
  spec: ResourceSpec,
  nowMs: number,
  withColumns = true,
): Table {
  const printer = tablePrinterFor(spec.name);
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${t.version}`,
    metadata: listMeta,
    columnDefinitions: withColumns ? printer.columns : [],
    rows: objects.map((o) => {
      const row: TableRow = { cells: printer.cells(o, nowMs) };
      const obj = rowObject(o, t, spec);
      if (obj !== undefined) row.object = obj;
      return row;
    }),
  };
}

/** Encodes the events of one Table watch (column definitions in the first event only). */
export function tableWatchEncoder(
  t: TableRequest,
  spec: ResourceSpec,
  now: () => number = Date.now,
): (ev: WatchEvent) => Buffer {
  let first = true;
  return (ev) => {
    let object: unknown;
    if (ev.type === 'ERROR') object = ev.object;
    else if (ev.type === 'BOOKMARK')
      object = tableOf([], { resourceVersion: ev.object.metadata.resourceVersion }, t, spec, now(), false);
    else {
      object = tableOf([ev.object], { resourceVersion: ev.object.metadata.resourceVersion }, t, spec, now(), first);
      first = false;
    }
    return Buffer.from(JSON.stringify({ type: ev.type, object }) + '\n');
  };
}
