/**
 * GET /metrics: the Prometheus text of every served cache's prom-client
 * registry. Caches normally share one registry (the CLI passes one); when
 * they do not, the texts are merged per metric family so each family's HELP
 * and TYPE lines appear once (Registry.merge refuses the same name twice).
 */
import type { Registry } from 'prom-client';
import type { ResponseLike } from './http-types.js';
import { sendText } from './status-response.js';

const PROMETHEUS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

interface Family {
  header: string[];
  samples: string[];
}

/** Merge Prometheus text expositions family by family (first HELP/TYPE wins). */
export function mergeMetricsText(texts: readonly string[]): string {
  const families = new Map<string, Family>();
  for (const text of texts) {
    let current: Family | undefined;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const m = /^# (HELP|TYPE) (\S+)/.exec(line);
      if (m !== null) {
        const name = m[2]!;
        let f = families.get(name);
        if (f === undefined) {
          f = { header: [], samples: [] };
          families.set(name, f);
        }
        current = f;
        if (!f.header.some((h) => h.startsWith(`# ${m[1]} `))) f.header.push(line);
        continue;
      }
      if (line.startsWith('#')) continue;
      if (current === undefined) {
        current = { header: [], samples: [] };
        families.set(`__untyped_${families.size}`, current);
      }
      current.samples.push(line);
    }
  }
  let out = '';
  for (const f of families.values()) out += [...f.header, ...f.samples].join('\n') + '\n\n';
  return out;
}

/** The exposition of a set of registries (each registry once). */
async function metricsText(registries: Iterable<Registry>): Promise<string> {
  const unique = [...new Set(registries)];
  const texts = await Promise.all(unique.map((r) => r.metrics()));
  return texts.length === 1 ? texts[0]! : mergeMetricsText(texts);
}

export async function sendMetrics(res: ResponseLike, registries: Iterable<Registry>): Promise<void> {
  sendText(res, 200, await metricsText(registries), PROMETHEUS_TYPE);
}
