import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { Compile } from 'typebox/compile';
import { packageRoot } from '../package-root.js';
import { parseSmtpUrl } from '../domain/notifications/mail.js';
import { ConfigSchema, ENV_NAMES, type Config } from './schema.js';

const validator = Compile(ConfigSchema);
const NUMERIC: ReadonlySet<keyof Config> = new Set(['port', 'workers', 'maxBodyMb', 'analyticsCacheMb', 'memoryMb', 'hotPersonsMb', 'queryTimeoutS', 'queryMemoryMb', 'queryConcurrency', 'queryQueue', 'watchdogS', 'backlogHigh', 'stopApplySeconds', 'applyBudgetS', 'logSegmentMb', 'metricsPort', 'retentionIntervalMinutes', 'recordingsMaxMb', 'shareCacheS', 'alertsTickMs', 'deliveryRetryS', 'clickhouseMaxLag', 'clickhouseGatherRows']);
const BOOLEAN: ReadonlySet<keyof Config> = new Set(['faultInjection', 'durabilityTrace', 'accessLog', 'crashBackoff', 'geoip', 'trustProxy']);

/** Path of `config/default.json`, in Quill's package (from src/ under tests, from dist/ or a bundle when built). */
function defaultConfigPath(): string {
  return join(packageRoot(), 'config', 'default.json');
}

/**
 * Defaults <- environment, validated once at start-up. Nothing else in Quill reads process.env.
 * The result is frozen and handed down explicitly (workers receive it as workerData).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const merged: Record<string, unknown> = JSON.parse(readFileSync(defaultConfigPath(), 'utf8'));
  for (const [field, name] of Object.entries(ENV_NAMES) as [keyof Config, string][]) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    merged[field] = NUMERIC.has(field) ? Number(raw) : BOOLEAN.has(field) ? raw === '1' || raw.toLowerCase() === 'true' : raw;
  }
  if (!validator.Check(merged)) {
    const first = [...validator.Errors(merged)][0];
    const field = first?.instancePath.slice(1) as keyof Config | undefined;
    throw new Error(`invalid configuration: ${field ? ENV_NAMES[field] ?? field : '?'} ${first?.message ?? ''}`);
  }
  const config = merged as Config;
  if (config.analytics === 'clickhouse' && config.clickhouseUrl === null) {
    throw new Error('invalid configuration: QUILL_ANALYTICS=clickhouse needs QUILL_CLICKHOUSE_URL (queries run on the exported tables)');
  }
  if (config.smtpUrl !== null) {
    try {
      parseSmtpUrl(config.smtpUrl);
    } catch (error) {
      throw new Error(`invalid configuration: QUILL_SMTP_URL ${(error as Error).message}`);
    }
  }
  if (config.publicUrl !== null) {
    try {
      config.publicUrl = new URL(config.publicUrl).toString().replace(/\/+$/, '');
    } catch {
      throw new Error('invalid configuration: QUILL_PUBLIC_URL is not a URL');
    }
  }
  if (config.workers === 0) config.workers = Math.max(1, availableParallelism());
  config.dataDir = resolve(config.dataDir);
  if (config.backupDir !== null) config.backupDir = resolve(config.backupDir);
  return Object.freeze(config);
}
