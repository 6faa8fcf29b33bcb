/**
 * apimachinery's name rules, with cases from its validation tests
 * (k8s.io/apimachinery/pkg/util/validation): DNS-1123 subdomains and labels,
 * DNS-1035 labels, qualified names (label and annotation keys), label values.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
} from '../../src/server/validation/name-rules.js';

const valid = (f: (v: string) => string[], values: string[]): void => {
  for (const v of values) assert.deepEqual(f(v), [], `${f.name}(${JSON.stringify(v)}) should be valid`);
};
const invalid = (f: (v: string) => string[], values: string[]): void => {
  for (const v of values) assert.notDeepEqual(f(v), [], `${f.name}(${JSON.stringify(v)}) should be invalid`);
};

// apimachinery's case lists share most of their values: each group once, combined per rule below.
/** Labels that start with a letter (valid for every label rule). */
const LETTER_START = ['a', 'ab', 'abc', 'a1', 'a-1', 'a--1--2--b'];
/** Labels that start with a digit (valid DNS-1123, invalid DNS-1035). */
const DIGIT_START = ['0', '01', '012', '1a', '1-a', '1--a--b--2'];
/** Empty, upper case, a dash at either end, underscores: invalid for every label and subdomain rule. */
const BAD_CHARACTERS = [
  '',
  'A',
  'ABC',
  'aBc',
  'A1',
  'A-1',
  '1-A',
  '-',
  'a-',
  '-a',
  '1-',
  '-1',
  '_',
  'a_',
  '_a',
  'a_b',
  '1_',
  '_1',
  '1_2',
];
const SPACES = [' ', 'a ', ' a', 'a b', '1 ', ' 1', '1 2'];
/** A label has no dot at all. */
const DOTTED = ['.', 'a.', '.a', 'a.b', '1.', '.1', '1.2'];
/** A subdomain has no empty part. */
const EMPTY_PARTS = ['.', 'a.', '.a', 'a..b', '1.', '.1', '1..2'];

test('DNS-1123 subdomain', () => {
  valid(isDNS1123Subdomain, [
    ...LETTER_START,
    ...DIGIT_START,
    'a.a',
    'ab.a',
    'a-1.a',
    '1-a.a',
    'a--1--2--b.0',
    'a.b.c.d.e',
    'aa.bb.cc.dd.ee',
    '1.2.3.4.5',
    '11.22.33.44.55',
    'a'.repeat(253),
  ]);
  invalid(isDNS1123Subdomain, [
    ...BAD_CHARACTERS,
    ...EMPTY_PARTS,
    ...SPACES,
    'A.a',
    'aB.a',
    'ab.A',
    'A1.a',
    'a1.A',
    'A.1',
    'aB.1',
    'A1.1',
    '1A.1',
    '0.A',
    '01.A',
    '012.A',
    '1A.a',
    '1a.A',
    'A.B.C.D.E',
    'AA.BB.CC.DD.EE',
    'a.B.c.d.e',
    'aa.bB.cc.dd.ee',
    'a@b',
    'a,b',
    'a;b',
    'a:b',
    'a%b',
    'a?b',
    'a$b',
    'a'.repeat(254),
  ]);
  assert.deepEqual(isDNS1123Subdomain('a'.repeat(254)), ['must be no more than 253 characters']);
});

test('DNS-1123 label and DNS-1035 label', () => {
  valid(isDNS1123Label, [...LETTER_START, ...DIGIT_START, 'a'.repeat(63)]);
  invalid(isDNS1123Label, [...BAD_CHARACTERS, ...DOTTED, ...SPACES, 'a'.repeat(64)]);
  valid(isDNS1035Label, [...LETTER_START, 'a'.repeat(63)]);
  invalid(isDNS1035Label, [...DIGIT_START, ...BAD_CHARACTERS, ...DOTTED, ...SPACES, 'a'.repeat(64)]);
});

test('qualified names (label and annotation keys)', () => {
  valid(isQualifiedName, [
    'simple',
    'now-with-dashes',
    '1-starts-with-num',
    '1234',
    'simple/simple',
    'now-with-dashes/simple',
    'now-with-dashes/now-with-dashes',
    'now.with.dots/simple',
    'now-with.dashes-and.dots/simple',
    '1-num.2-num/3-num',
    '1234/5678',
    '1.2.3.4/5678',
    'Uppercase_Is_OK_123',
    'example.com/Uppercase_Is_OK_123',
    'requests.storage-foo',
    'a'.repeat(63),
    'a'.repeat(253) + '/' + 'b'.repeat(63),
  ]);
  invalid(isQualifiedName, [
    'nospecialchars%^=@',
    'cantendwithadash-',
    '-cantstartwithadash-',
    'only/one/slash',
    'Example.com/abc',
    'example_com/abc',
    'example.com/',
    '/simple',
    'a'.repeat(64),
    'a'.repeat(254) + '/abc',
  ]);
  assert.deepEqual(isQualifiedName('/simple'), ['prefix part must be non-empty']);
  assert.deepEqual(isQualifiedName('example.com/'), ['name part must be non-empty']);
});

test('label values', () => {
  valid(isValidLabelValue, [
    'simple',
    'now-with-dashes',
    '1-starts-with-num',
    'end-with-num-1',
    '1234',
    'a'.repeat(63),
    '',
  ]);
  invalid(isValidLabelValue, [
    'nospecialchars%^=@',
    'Tama-nui-te-rā.is.Māori.sun',
    '\\backslashes\\are\\bad',
    '-starts-with-dash',
    'ends-with-dash-',
    '.starts.with.dot',
    'ends.with.dot.',
    'a'.repeat(64),
  ]);
});
