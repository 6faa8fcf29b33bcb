/**
 * EtcdCodec: how EtcdStore lays objects out in etcd and reads them back (docs/etcd.md "Keys and
 * values"). It does no I/O.
 * - Keys: `${prefix}${namespace}/${name}`, or `${prefix}${name}` for a cluster-scoped object. A
 *   namespace or name with a '/' is refused (400), so keys never collide.
 * - Values: the object as JSON, without metadata.resourceVersion. Every read sets it from the
 *   kv's mod_revision; a DELETED event gets the delete's revision.
 * - Anything that is not a JSON object of the stored shape (not written by this store) decodes to
 *   undefined: it is invisible to list, get and watch alike.
 * Everything decoded is frozen, as MemoryStore hands objects out.
 */
import type { IEvent } from 'etcd3';
import { BadRequestError } from '../core/errors.js';
import type { KubeObject, StoreEvent } from '../core/types.js';
import { frozenStored, metadataAt } from './stored-copy.js';
import { readableObject, type ObjectLimits } from './stored-shape.js';

export class EtcdCodec {
  /** The key prefix, always ending in '/'. */
  readonly prefix: string;
  readonly prefixKey: Buffer;
  /** The end of the prefix's key range (exclusive). */
  readonly prefixEndKey: Buffer;

  /** A prefix without a trailing '/' gets one. */
  constructor(
    prefix: string,
    /** Depth and size limits of the objects written and read. */
    readonly limits: ObjectLimits,
  ) {
    this.prefix = prefix.endsWith('/') ? prefix : prefix + '/';
    this.prefixKey = Buffer.from(this.prefix);
    this.prefixEndKey = prefixEnd(this.prefixKey);
  }

  keyOf(namespace: string, name: string): Buffer {
    if (typeof name !== 'string' || name === '') throw new BadRequestError('metadata.name is required');
    if (typeof namespace !== 'string') throw new BadRequestError('metadata.namespace must be a string');
    if (name.includes('/') || namespace.includes('/')) {
      throw new BadRequestError(`namespace and name may not contain '/': "${namespace}/${name}"`);
    }
    return Buffer.from(namespace === '' ? this.prefix + name : `${this.prefix}${namespace}/${name}`);
  }

  /** The identity a key encodes (namespace and name only), for a value that cannot be read. */
  objectFromKey(key: Buffer): KubeObject | undefined {
    const rest = key.toString('utf8').slice(this.prefix.length);
    if (rest === '') return undefined;
    const slash = rest.indexOf('/');
    return slash < 0
      ? { metadata: { name: rest } }
      : { metadata: { namespace: rest.slice(0, slash), name: rest.slice(slash + 1) } };
  }

  /** The stored form: the object with `metadata`, without metadata.resourceVersion. */
  encode(object: KubeObject, metadata: KubeObject['metadata']): Buffer {
    const { resourceVersion: _omit, ...stored } = metadata;
    return Buffer.from(JSON.stringify({ ...object, metadata: stored }));
  }

  /** A stored value read at `rv`, or undefined for a value of another shape. */
  decode(value: Buffer, rv: number): KubeObject | undefined {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value.toString('utf8'));
    } catch {
      return undefined;
    }
    // The store-read boundary: anything without the stored shape (too deep, wrong types) is invisible.
    const obj = readableObject(parsed, this.limits);
    if (obj === undefined) return undefined;
    return withRevision(obj, obj.metadata, rv);
  }

  /** One watch event as a store event, or undefined for a change this store cannot read. */
  decodeEvent(ev: IEvent): StoreEvent | undefined {
    const rv = Number(ev.kv.mod_revision);
    const prevObject = ev.prev_kv ? this.decode(ev.prev_kv.value, Number(ev.prev_kv.mod_revision)) : undefined;
    if (String(ev.type).toUpperCase() === 'DELETE') {
      // The last state with the deletion RV; if etcd no longer had the previous value (compacted),
      // fall back to the identity encoded in the key.
      const base = prevObject ?? this.objectFromKey(ev.kv.key);
      if (base === undefined) return undefined;
      const object = withRevision(base, base.metadata, rv);
      const event: StoreEvent = { type: 'DELETED', object, resourceVersion: rv };
      if (prevObject !== undefined) event.prevObject = prevObject;
      return event;
    }
    const object = this.decode(ev.kv.value, rv);
    if (object === undefined) {
      // Unreadable (not ours, or not the stored shape): invisible, so a change into it reads as a deletion.
      if (prevObject === undefined) return undefined;
      return {
        type: 'DELETED',
        object: withRevision(prevObject, prevObject.metadata, rv),
        prevObject,
        resourceVersion: rv,
      };
    }
    if (ev.kv.create_revision === ev.kv.mod_revision) return { type: 'ADDED', object, resourceVersion: rv };
    const event: StoreEvent = { type: 'MODIFIED', object, resourceVersion: rv };
    if (prevObject !== undefined) event.prevObject = prevObject;
    return event;
  }
}

/** A frozen copy (object and metadata) with metadata.resourceVersion = rv, as MemoryStore hands out. */
export function withRevision(object: KubeObject, metadata: KubeObject['metadata'], rv: number): KubeObject {
  return frozenStored(object, metadataAt(metadata, rv));
}

/** The end of the key range with prefix `p`: p with its last byte incremented (carrying over 0xff). */
function prefixEnd(p: Buffer): Buffer {
  const end = Buffer.from(p);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i] = end[i]! + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]); // all 0xff: to the end of the keyspace
}
