/**
 * Property-based fuzz of the library API (fast-check), in every mode, over
 * two stores: a MemoryStore (its writes check the stored shape) and an
 * UncheckedStore that keeps whatever it is given (any Store a user writes:
 * the engine's read boundary, the reflector, must make it safe). Random
 * writes of odd objects (null maps, wrong types, deep nests), random watch
 * options (RVs, selectors, timeouts) and random lists/gets, with selector
 * watches open. Asserts: nothing is thrown but WatchCacheErrors with a
 * Status; no uncaught exception or unhandled rejection; afterwards a clean
 * write, list and watch work. The case count is printed.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MODES } from '../../src/cache/cache-options.js';
import { WatchCache } from '../../src/cache/watch-cache.js';
import { WatchCacheError } from '../../src/core/errors.js';
import {
  objectKey,
  type KubeObject,
  type Store,
  type StoreEvent,
  type StoreListResult,
  type StoreWatch,
} from '../../src/core/types.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { Watch } from '../../src/watch/watch.js';
import {
  fieldSelector,
  labelSelector,
  mutatedPod,
  NAMES,
  NAMESPACES,
  nestedValue,
  resourceVersion,
} from './fuzz-arbitraries.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

/** A Store that checks nothing: it keeps and emits exactly what it is given. */
class UncheckedStore implements Store {
  private rv = 0;
  private readonly objects = new Map<string, KubeObject>();
  private readonly log: StoreEvent[] = [];
  private readonly subs = new Set<(e: StoreEvent) => void>();

  async list(): Promise<StoreListResult> {
    return { items: [...this.objects.values()], resourceVersion: this.rv };
  }
  watch(afterRV: number, onEvent: (e: StoreEvent) => void): StoreWatch {
    const backlog = this.log.filter((e) => e.resourceVersion > afterRV);
    const sub = (e: StoreEvent): void => onEvent(e);
    queueMicrotask(() => backlog.forEach(sub));
    this.subs.add(sub);
    return { stop: () => void this.subs.delete(sub) };
  }
  async currentResourceVersion(): Promise<number> {
    return this.rv;
  }
  /** Put anything under ns/name (an odd object as a user's store might hand it out). */
  put(ns: string, name: string, object: unknown): void {
    const key = objectKey(ns, name);
    const prev = this.objects.get(key);
    this.rv++;
    const obj = object as KubeObject;
    this.objects.set(key, obj);
    const e: StoreEvent =
      prev === undefined
        ? { type: 'ADDED', object: obj, resourceVersion: this.rv }
        : { type: 'MODIFIED', object: obj, prevObject: prev, resourceVersion: this.rv };
    this.log.push(e);
    queueMicrotask(() => this.subs.forEach((s) => s(e)));
  }
}

type Op =
  | { kind: 'write'; verb: 'create' | 'update'; object: unknown }
  | { kind: 'delete'; ns: string; name: string; uid: unknown; rv: unknown }
  | { kind: 'put'; ns: string; name: string; object: unknown }
  | { kind: 'watch'; options: Record<string, unknown> }
  | { kind: 'list'; options: Record<string, unknown> }
  | { kind: 'get'; ns: string; name: string; rv: string };

const nsName = fc.tuple(fc.constantFrom(...NAMESPACES), fc.constantFrom(...NAMES));
const anyObject = fc.oneof(
  { weight: 6, arbitrary: nsName.chain(([ns, n]) => mutatedPod(ns, n)) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 200, max: 5000 })
      .map((d) => ({ metadata: { namespace: 'default', name: 'a', labels: { app: 'x' } }, spec: nestedValue(d) })),
  },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) },
);
const watchOptions = fc.record(
  {
    resourceVersion: fc.oneof(resourceVersion, fc.anything({ maxDepth: 0 })),
    resourceVersionMatch: fc.constantFrom('NotOlderThan', 'Exact', '', 'x', undefined),
    sendInitialEvents: fc.constantFrom(true, false, undefined, 'yes'),
    allowWatchBookmarks: fc.constantFrom(true, false, 1),
    namespace: fc.constantFrom('default', 'ns1', '', undefined, 7),
    labelSelector: fc.oneof(labelSelector, fc.anything({ maxDepth: 0 })),
    fieldSelector: fc.oneof(fieldSelector, fc.anything({ maxDepth: 0 })),
    timeoutSeconds: fc.constantFrom(1, 0, -1, 2_147_484, 1e12, Number.NaN, 0.5, '3'),
    channelCapacity: fc.constantFrom(1, 0, -3, 2.5, 100, undefined),
    limit: fc.constantFrom(1, 0, -1, 2, 1.5, 'x', undefined),
    continue: fc.constantFrom('', 'abc', undefined, 5),
  },
  { requiredKeys: [] },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('write' as const),
      verb: fc.constantFrom('create' as const, 'update' as const),
      object: anyObject,
    }),
  },
  {
    weight: 1,
    arbitrary: nsName.chain(([ns, name]) =>
      fc.record({
        kind: fc.constant('delete' as const),
        ns: fc.constant(ns),
        name: fc.constant(name),
        uid: fc.anything({ maxDepth: 0 }),
        rv: fc.oneof(resourceVersion, fc.constant(undefined)),
      }),
    ),
  },
  {
    weight: 3,
    arbitrary: nsName.chain(([ns, name]) =>
      fc.record({ kind: fc.constant('put' as const), ns: fc.constant(ns), name: fc.constant(name), object: anyObject }),
    ),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('watch' as const), options: watchOptions }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('list' as const), options: watchOptions }) },
  {
    weight: 1,
    arbitrary: nsName.chain(([ns, name]) =>
      fc.record({
        kind: fc.constant('get' as const),
        ns: fc.constant(ns),
        name: fc.constant(name),
        rv: resourceVersion,
      }),
    ),
  },
);

/** Rejections must be Status errors; anything else fails the property. */
async function expectStatus(p: () => unknown): Promise<void> {
  try {
    await p();
  } catch (err) {
    assert.ok(err instanceof WatchCacheError, `not a WatchCacheError: ${String((err as Error)?.stack ?? err)}`);
    assert.equal(err.status.kind, 'Status');
    assert.notEqual(err.code, 500, `500: ${err.message}`);
  }
}

/** Pull up to a few events without waiting long; each must be well formed. */
async function sample(w: Watch): Promise<void> {
  const it = w[Symbol.asyncIterator]();
  for (let i = 0; i < 3; i++) {
    const next = await Promise.race([it.next(), new Promise<'idle'>((r) => setTimeout(() => r('idle'), 5))]);
    if (next === 'idle' || next.done === true) break;
    assert.ok(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'].includes(next.value.type));
    if (next.value.type === 'ERROR') assert.equal(next.value.object.kind, 'Status');
  }
}

const uncaught: unknown[] = [];
const onUncaught = (err: unknown): void => void uncaught.push(err);
let totalCases = 0;

for (const storeKind of ['memory', 'unchecked'] as const) {
  for (const mode of MODES) {
    describe(`library fuzz, mode ${mode}, ${storeKind} store`, () => {
      test(`${RUNS} random operations: only Status errors, the process lives, clean reads afterwards`, async () => {
        process.on('uncaughtException', onUncaught);
        process.on('unhandledRejection', onUncaught);
        const memory = new MemoryStore();
        const unchecked = new UncheckedStore();
        const store: Store = storeKind === 'memory' ? memory : unchecked;
        const cache = new WatchCache({
          store,
          mode,
          blockTimeoutMs: 20,
          indexers: { 'spec.nodeName': (o) => (o.spec as { nodeName: string }).nodeName },
          history: { lowerBound: 8, upperBound: 64 },
        });
        await cache.start();
        const open = ['app=x', '!tier', 'app in (x,y)'].map((s) =>
          cache.watch({ resourceVersion: '0', labelSelector: s }),
        );
        open.push(
          cache.watch({ resourceVersion: '0', fieldSelector: 'spec.nodeName=n1' }),
          cache.watch({ resourceVersion: '0', fieldSelector: 'metadata.name=a,status.phase!=x' }),
        );
        const drained = open.map(async (w) => {
          for await (const ev of w) assert.ok(ev.type !== 'ERROR' || ev.object.kind === 'Status');
        });
        let cases = 0;
        // The engine's wait timers are unref'd (a future-RV get would otherwise let the loop empty here).
        const keepAlive = setInterval(() => {}, 1000);
        try {
          await fc.assert(
            fc.asyncProperty(op, async (o) => {
              cases++;
              if (process.env.FUZZ_DEBUG !== undefined) console.error('op', JSON.stringify(o).slice(0, 300));
              switch (o.kind) {
                case 'write':
                  if (storeKind === 'memory')
                    await expectStatus(() =>
                      o.verb === 'create'
                        ? memory.create(o.object as KubeObject)
                        : memory.update(o.object as KubeObject),
                    );
                  break;
                case 'delete':
                  if (storeKind === 'memory')
                    await expectStatus(() =>
                      memory.delete(o.ns, o.name, { uid: o.uid as string, resourceVersion: o.rv as string }),
                    );
                  break;
                case 'put':
                  if (storeKind === 'unchecked') unchecked.put(o.ns, o.name, o.object);
                  break;
                case 'watch':
                  await expectStatus(async () => {
                    const w = cache.watch(o.options);
                    try {
                      await sample(w);
                    } finally {
                      w.stop();
                    }
                  });
                  break;
                case 'list':
                  await expectStatus(() => cache.list(o.options));
                  break;
                case 'get':
                  await expectStatus(() => cache.get(o.ns, o.name, { resourceVersion: o.rv }));
                  break;
              }
              await new Promise((r) => setImmediate(r)); // let dispatch and passes run
            }),
            { numRuns: RUNS, endOnFailure: true },
          );
          totalCases += cases;
          console.log(`fuzz library ${mode} ${storeKind}: ${cases} cases`);
          // Afterwards: a clean write, list and watch.
          const clean = {
            metadata: { namespace: 'default', name: 'clean', labels: { app: 'x' } },
            spec: { nodeName: 'n1' },
          };
          if (storeKind === 'memory') await memory.create(clean);
          else unchecked.put('default', 'clean', clean);
          const w = cache.watch({ resourceVersion: '0', labelSelector: 'app=x' });
          let seen = false;
          for await (const ev of w) {
            if (ev.type === 'ADDED' && ev.object.metadata.name === 'clean') {
              seen = true;
              break;
            }
          }
          assert.ok(seen);
          const list = await cache.list({ labelSelector: 'app=x', fieldSelector: 'spec.nodeName=n1' });
          assert.ok(list.items.some((i) => i.metadata.name === 'clean'));
          for (const ow of open) assert.equal(ow.stopped, false, 'an open selector watch was ended');
          assert.deepEqual(uncaught, []);
        } finally {
          clearInterval(keepAlive);
          await cache.stop();
          await Promise.all(drained);
          process.off('uncaughtException', onUncaught);
          process.off('unhandledRejection', onUncaught);
        }
      });
    });
  }
}

after(() => console.log(`fuzz library: ${totalCases} cases in total`));
