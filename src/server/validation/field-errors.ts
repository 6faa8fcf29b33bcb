/**
 * Field errors and the 422 `Invalid` Status kube-apiserver builds from them:
 * message `<Kind> "<name>" is invalid: <errors>` (one error as is, several in
 * brackets), details `{name, kind, causes: [{reason, message, field}]}`, each
 * error worded `<field>: <Type>: <detail>` as apimachinery's field.Error.
 */
import { WatchCacheError } from '../../core/errors.js';

type FieldErrorType = 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueTooLong' | 'FieldValueForbidden';

const TYPE_TEXT: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueTooLong: 'Too long',
  FieldValueForbidden: 'Forbidden',
};

export interface FieldError {
  readonly type: FieldErrorType;
  /** The field path, e.g. `metadata.labels`. */
  readonly field: string;
  /** The offending value (shown for Invalid). */
  readonly value?: unknown;
  readonly detail: string;
}

export function required(field: string, detail: string): FieldError {
  return { type: 'FieldValueRequired', field, detail };
}
export function invalid(field: string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, value, detail };
}
export function tooLong(field: string, detail: string): FieldError {
  return { type: 'FieldValueTooLong', field, detail };
}
export function forbidden(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, detail };
}

/** The part after the field path: `Invalid value: "x": detail`. */
function body(e: FieldError): string {
  if (e.type === 'FieldValueInvalid') {
    const shown = typeof e.value === 'string' ? JSON.stringify(e.value) : (JSON.stringify(e.value) ?? 'null');
    return `${TYPE_TEXT[e.type]}: ${shown}: ${e.detail}`;
  }
  return `${TYPE_TEXT[e.type]}: ${e.detail}`;
}

function fieldErrorText(e: FieldError): string {
  return `${e.field}: ${body(e)}`;
}

/** The 422 Invalid error for an object, or undefined when there are no errors. */
export function invalidObject(kind: string, name: string, errors: readonly FieldError[]): WatchCacheError | undefined {
  if (errors.length === 0) return undefined;
  const texts = errors.map(fieldErrorText);
  const message = `${kind} "${name}" is invalid: ${texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`}`;
  return new WatchCacheError(422, 'Invalid', message, {
    name,
    kind,
    causes: errors.map((e) => ({ reason: e.type, message: body(e), field: e.field })),
  });
}
