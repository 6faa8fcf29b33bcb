/**
 * Building one page of a list: objects in key order that match a selection,
 * from an optional start key, at most `limit` of them (0 = all), with a
 * continue token when more matching objects remain.
 */
import { objectKey, type KubeObject } from '../core/types.js';
import type { Selection } from '../selection/selection.js';
import { encodeContinue } from './continue-token.js';

export interface ListPage {
  items: KubeObject[];
  resourceVersion: number;
  continue?: string;
  remainingItemCount?: number;
}

/** First index in sorted `keys` with key >= start. */
function lowerBound(keys: readonly string[], start: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < start) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function buildPage(
  keys: readonly string[],
  lookup: (key: string) => KubeObject | undefined,
  selection: Selection,
  rv: number,
  limit: number,
  start: string | undefined,
): ListPage {
  let i = 0;
  if (start !== undefined) i = lowerBound(keys, start);
  else if (selection.namespace !== '') i = lowerBound(keys, objectKey(selection.namespace, ''));
  const items: KubeObject[] = [];
  let lastKey = '';
  for (; i < keys.length; i++) {
    const key = keys[i]!;
    const obj = lookup(key);
    if (obj === undefined) continue;
    if (selection.namespace !== '' && (obj.metadata.namespace ?? '') !== selection.namespace) {
      if ((obj.metadata.namespace ?? '') > selection.namespace) break; // past the namespace's key range
      continue;
    }
    if (!selection.matches(obj)) continue;
    if (limit > 0 && items.length === limit) {
      const page: ListPage = { items, resourceVersion: rv, continue: encodeContinue(rv, lastKey) };
      if (selection.labels.empty && selection.fields.empty)
        page.remainingItemCount = countRemaining(keys, i, lookup, selection);
      return page;
    }
    items.push(obj);
    lastKey = key;
  }
  return { items, resourceVersion: rv };
}

function countRemaining(
  keys: readonly string[],
  from: number,
  lookup: (key: string) => KubeObject | undefined,
  selection: Selection,
): number {
  let n = 0;
  for (let i = from; i < keys.length; i++) {
    const obj = lookup(keys[i]!);
    if (obj !== undefined && selection.matches(obj)) n++;
  }
  return n;
}
