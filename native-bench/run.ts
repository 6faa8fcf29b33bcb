/**
 * `npm run bench`: the benchmark suite with `watchcache bench` flags
 * (bench-args.ts). Quick by default (a few minutes on 2 cores); `--full`
 * for the whole sweep. Writes bench-results/latest.json and .html.
 *
 *   npm run bench [-- --full] [-- --modes alpha,beta --stalled 1000 ...]
 */
import { runBenchCommand } from './bench-command.js';

process.exitCode = await runBenchCommand(process.argv.slice(2));
