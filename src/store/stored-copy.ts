/**
 * The copies a store hands out (MemoryStore's writes, EtcdStore's decoded
 * revisions): an object and its metadata, each copied and frozen.
 *
 * How they are copied matters to everyone who reads them (the indexers and
 * selection, JSON.stringify, msgpackr's pack of beta's ring mirror): V8
 * gives every frozen copy made with an object spread (`{ ...o, k: v }`) a
 * hidden class of its own, so reads of a field go megamorphic across the
 * objects and each object carries its own map and descriptors (issue 13:
 * ~22k instructions per write, and msgpackr's loads miss more). A copy made
 * with Object.assign into a fresh literal follows the transition tree from
 * `{}`: copies with the same keys in the same order share one hidden class,
 * frozen ones too.
 */
import type { KubeObject, ObjectMeta } from '../core/types.js';
import { markChecked } from './stored-shape.js';

/** A copy of `source`'s own enumerable properties, in their order, sharing a hidden class with its likes. */
export function plainCopy<T extends object>(source: T): T {
  // Object.assign would call the __proto__ setter (a JSON object may carry such a key): spread keeps it a field.
  if (Object.hasOwn(source, '__proto__')) return { ...source };
  return Object.assign({}, source);
}

/** A copy of `metadata` (plainCopy) with resourceVersion `rv`, where the store stamps a write or revision. */
export function metadataAt(metadata: ObjectMeta, rv: number): ObjectMeta {
  const copy = plainCopy(metadata);
  copy.resourceVersion = String(rv);
  return copy;
}

/** `object` as a store hands it out: a frozen copy with `metadata` (a copy of the store's own), frozen too. */
export function frozenStored(object: KubeObject, metadata: ObjectMeta): KubeObject {
  const copy = plainCopy(object);
  copy.metadata = Object.freeze(metadata);
  return markChecked(Object.freeze(copy));
}
