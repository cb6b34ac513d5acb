/**
 * Structured logs: one JSON object per line on stdout (pino), with `level`, `time`, `msg`, the thread's
 * `component` (`front`, `worker 0`, ...), its `thread` id (a worker thread and its replacements share a component,
 * not a thread id) and fields of the event. Log collectors (journald, Docker, Loki, ...)
 * read stdout; nothing writes log files.
 *
 * Threads write their own lines to file descriptor 1. Worker threads write synchronously (a line about a crash
 * must not be lost with the thread); the front writes asynchronously (its thread does no disk I/O, and an access
 * log line per request must not block it), and `flushLogs` drains it before the process exits.
 *
 * Start and stop lines go through `lifecycle`, which prints at `info` whatever QUILL_LOG_LEVEL says: tests,
 * benchmarks and supervisors wait for the start line.
 */
import { threadId } from 'node:worker_threads';
import pino from 'pino';
import type { Config } from '../config/schema.js';

export type Logger = pino.Logger;

/** QUILL_LOG_LEVEL to pino's level; `silent` keeps errors (a failure is never swallowed). */
function levelOf(level: Config['logLevel']): pino.LevelWithSilent {
  return level === 'silent' ? 'error' : level;
}

const destinations: pino.DestinationStream[] = [];

export function createLogger(config: Pick<Config, 'logLevel'>, component: string, opts: { async?: boolean } = {}): Logger {
  const destination = pino.destination({ dest: 1, sync: opts.async !== true });
  destinations.push(destination);
  return pino({ level: levelOf(config.logLevel), base: { pid: process.pid, thread: threadId, component } }, destination);
}

/** A child of `log` that prints start/stop lines at any configured level. */
export function lifecycle(log: Logger): Logger {
  return log.child({}, { level: 'info' });
}

/** Writes out what asynchronous destinations still buffer (before process.exit). */
export function flushLogs(): void {
  for (const d of destinations) {
    try {
      (d as unknown as { flushSync(): void }).flushSync();
    } catch {
      /* nothing buffered, or the stream is already closed */
    }
  }
}
