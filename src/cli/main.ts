#!/usr/bin/env node
/**
 * The `watchcache` command: dispatches to a subcommand. Usage mistakes exit
 * 2, runtime failures exit 1, a clean SIGTERM/SIGINT shutdown exits 0.
 */
import { parseServeArgs } from './serve-command.js';
import { ServeRuntime } from './serve-runtime.js';
import { MAIN_USAGE, SERVE_USAGE } from './usage.js';
import { UsageError } from './usage-error.js';
import { packageVersion } from './version.js';

const io = { out: (l: string) => process.stdout.write(l + '\n'), err: (l: string) => process.stderr.write(l + '\n') };

async function serve(args: string[]): Promise<number | undefined> {
  const config = parseServeArgs(args);
  if (config === undefined) {
    process.stdout.write(SERVE_USAGE);
    return 0;
  }
  const runtime = new ServeRuntime(config, io);
  const onSignal = (signal: NodeJS.Signals): void => {
    runtime.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        io.err(`watchcache: error during ${signal} shutdown: ${(err as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  await runtime.start();
  return undefined; // keep running until a signal
}

async function main(argv: string[]): Promise<number | undefined> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'bench':
      // Loaded on demand: `serve` never loads the benchmark suite.
      return (await import('../../native-bench/bench-command.js')).runBenchCommand(rest);
    case 'simulate':
      return (await import('../sim/simulate-command.js')).runSimulateCommand(rest);
    case '-h':
    case '--help':
    case 'help':
      if (command === 'help' && rest[0] !== undefined && rest[0] !== '') return main([rest[0], '--help']);
      process.stdout.write(MAIN_USAGE);
      return 0;
    case '-v':
    case '--version':
    case 'version':
      process.stdout.write(packageVersion() + '\n');
      return 0;
    case undefined:
      process.stderr.write(MAIN_USAGE);
      return 2;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      const command = process.argv[2];
      const known = command === 'serve' || command === 'bench' || command === 'simulate';
      io.err(`watchcache${known ? ` ${command}` : ''}: ${err.message}`);
      io.err(`Run 'watchcache${known ? ` ${command}` : ''} --help' for usage.`);
      process.exit(err.exitCode);
    }
    io.err(`watchcache: ${(err as Error).message ?? String(err)}`);
    process.exit(1);
  },
);
