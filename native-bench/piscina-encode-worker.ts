/** piscina task for native-bench/piscina-encode.ts: msgpack-encode a batch of objects. */
import { Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false });

export default function encodeBatch(objects: unknown[]): Uint8Array[] {
  return objects.map((o) => packr.pack(o));
}
