/**
 * The name rules of apimachinery's validation package, with its wording:
 * DNS-1123 subdomain and label, DNS-1035 label, qualified names (label and
 * annotation keys) and label values. Each check returns the list of problems
 * (empty = valid), as Go's IsDNS1123Subdomain and friends do.
 */

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const DNS1035_LABEL = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME_PART = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE = `(${QUALIFIED_NAME_PART})?`;

const whole = (re: string): RegExp => new RegExp(`^${re}$`);
const SUBDOMAIN_RE = whole(DNS1123_SUBDOMAIN);
const LABEL_RE = whole(DNS1123_LABEL);
const DNS1035_RE = whole(DNS1035_LABEL);
const NAME_PART_RE = whole(QUALIFIED_NAME_PART);
const LABEL_VALUE_RE = whole(LABEL_VALUE);

const DNS1123_SUBDOMAIN_MAX = 253;
const DNS1123_LABEL_MAX = 63;

const maxLen = (n: number): string => `must be no more than ${n} characters`;

function regexError(what: string, re: string, examples: string[]): string {
  return `${what} (e.g. ${examples.map((e) => `'${e}'`).join(',  or ')}, regex used for validation is '${re}')`;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX) errs.push(maxLen(DNS1123_SUBDOMAIN_MAX));
  if (!SUBDOMAIN_RE.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN,
        ['example.com'],
      ),
    );
  }
  return errs;
}

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_LABEL_MAX) errs.push(maxLen(DNS1123_LABEL_MAX));
  if (!LABEL_RE.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        DNS1123_LABEL,
        ['my-name', '123-abc'],
      ),
    );
  }
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_LABEL_MAX) errs.push(maxLen(DNS1123_LABEL_MAX));
  if (!DNS1035_RE.test(value)) {
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL,
        ['my-name', 'abc-123'],
      ),
    );
  }
  return errs;
}

/** A label or annotation key: `[prefix/]name`, prefix a DNS-1123 subdomain, name a qualified name part. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const e of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${e}`);
  } else {
    return [
      regexError(
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        QUALIFIED_NAME_PART,
        ['MyName', 'my.name', '123-abc'],
      ) + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > DNS1123_LABEL_MAX) errs.push(`name part ${maxLen(DNS1123_LABEL_MAX)}`);
  if (name.length > 0 && !NAME_PART_RE.test(name)) {
    errs.push(
      `name part ${regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", QUALIFIED_NAME_PART, ['MyName', 'my.name', '123-abc'])}`,
    );
  }
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (value.length > DNS1123_LABEL_MAX) errs.push(maxLen(DNS1123_LABEL_MAX));
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE,
        ['MyValue', 'my_value', '12345'],
      ),
    );
  }
  return errs;
}
