/**
 * The server's structured log (pino): one JSON object per line
 * (`{"level":30,"time":...,"msg":...}`) when the output is not a terminal,
 * the format log collectors take; on a terminal the same records as short
 * human lines (`12:00:00.123 INFO  msg key=value`). Levels: trace, debug,
 * info (default), warn, error, fatal, silent (`--log-level`).
 */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go (default process.stderr). */
  destination?: NodeJS.WritableStream & { isTTY?: boolean };
  /** JSON lines (default: when the destination is not a TTY). */
  json?: boolean;
}

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** Turns pino's JSON lines into short human lines (terminals). */
function humanLines(out: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue;
        let rec: Record<string, unknown>;
        try {
          rec = JSON.parse(line) as Record<string, unknown>;
        } catch {
          out.write(line + '\n');
          continue;
        }
        const { level, time, msg, pid: _pid, hostname: _host, ...rest } = rec;
        const t = new Date(Number(time)).toISOString().slice(11, 23);
        const fields = Object.entries(rest)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(' ');
        // eslint-disable-next-line @typescript-eslint/no-base-to-string -- pino's msg is a string; anything else prints as String() would
        const shown = String(msg ?? '');
        out.write(
          `${t} ${(LEVEL_NAMES[Number(level)] ?? String(level)).padEnd(5)} ${shown}${fields === '' ? '' : ' ' + fields}\n`,
        );
      }
      done();
    },
  });
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? process.stderr;
  const json = options.json ?? destination.isTTY !== true;
  return pino(
    { level: options.level ?? 'info', base: { pid: process.pid } },
    json ? destination : humanLines(destination),
  );
}

/** A logger that drops everything (library use without a logger). */
export const silentLogger: Logger = pino({ level: 'silent' });
