/**
 * What a shard worker thread runs (workers/shard-worker.ts only calls this): Piscina control tasks (start-up,
 * shutdown, and `serve`, which hands over the port that requests arrive on: src/worker/request-port.ts).
 */
import type { Config } from '../config/schema.js';
import { Errors } from '../protocol/errors.js';
import type { ControlTask, Reply, TaskItem } from '../protocol/worker-messages.js';
import { SharedState } from '../protocol/shared-state.js';
import { bootstrap } from './bootstrap.js';
import { authSnapshot } from './ops/accounts.js';
import { OPS } from './ops/index.js';
import { flagStreamState } from './ops/local-evaluation.js';
import { DELETE_PERSON_EVENTS, deletePersonEventsHandler } from './ops/persons.js';
import { namesHandler, PROPERTY_NAMES } from './ops/property-definitions/block-names.js';
import { EVENTS_GET, EVENTS_SCAN, EVENTS_VALUES, EVENTS_VOLUMES, getHandler, scanHandler, valuesHandler, volumesHandler } from './ops/events/scatter.js';
import { EXPORT_OLDEST, EXPORT_PERSONS_POSITION, EXPORT_STARTING_POINTS, exportOldestHandler, exportPersonsPositionHandler, exportStartingPointsHandler } from './export/export-service.js';
import { appliedHandler, deadLettersHandler, enqueueHandler, pauseApplyHandler, resendPartsHandler, statsHandler } from './ingest/ingest-service.js';
import { ANALYTICS_FIRST_EVENT, ANALYTICS_SCAN, firstEventHandler, scanHandler as analyticsScanHandler } from './analytics/scatter.js';
import { SEQUENCE_COLLECT, SEQUENCE_FINISH, SEQUENCE_TAKE, collectHandler, finishHandler, takeHandler } from './analytics/sequences.js';
import './analytics/funnels.js';
import './analytics/paths.js';
import './analytics/correlation.js';
import { WEB_SESSIONS_FOLD, WEB_SESSIONS_REDUCE, WEB_SESSIONS_SCAN, webFoldHandler, webReduceHandler, webScanHandler } from './analytics/web-sessions.js';
import { PERSON_EVENTS, personEventsHandler } from './analytics/person-events.js';
import { HOGQL_SCAN, hogqlScanHandler } from './query/hogql-scan.js';
import { reloadHandler } from './replication.js';
import { FLAG_USAGE_FLUSH, flagUsageFlushHandler } from './flag-usage.js';
import { RETENTION_RUN, retentionRunHandler } from './retention.js';
import { BACKUP_ENV, backupEnvHandler } from './backup.js';
import { errorReply, replyForThrown } from './reply.js';
import { abandonQueries, budgetFor, onCancelCheck, withBudget } from './query-budget.js';
import { readStatus } from './query/query-status.js';
import { Heartbeat } from './watchdog.js';
import { MemoryRelief } from './memory-relief.js';
import { isAnalysis, requestedTimeoutS } from './ops/analysis-ops.js';
import { installFatalExit } from './fatal-exit.js';
import { RequestPort } from './request-port.js';
import { setRequestsWaitingProbe } from './waiting-requests.js';
import { WorkerRuntime } from './runtime.js';
import { RecordingsService } from './recordings/recordings-service.js';
import { RECORDINGS_CLEAN, recordingsCleanHandler } from './ops/recordings.js';
import { NotificationScheduler } from './notifications/scheduler.js';
import { insightPortOf } from './notifications/insight-port.js';

/** Operations whose durations GET /metrics reports (quill_insight_query_duration_seconds). */
const TIMED = new Set(['insights.trend', 'persons.trends']);

export interface WorkerData {
  config: Readonly<Config>;
  index: number;
  /** See src/protocol/shared-state.ts. */
  shared: SharedArrayBuffer;
}

export function createWorkerEntry(data: WorkerData) {
  const rt = new WorkerRuntime(data.config, data.index, new SharedState(data.shared), {
    reload: reloadHandler,
    [FLAG_USAGE_FLUSH]: flagUsageFlushHandler,
    [RETENTION_RUN]: retentionRunHandler,
    [RECORDINGS_CLEAN]: recordingsCleanHandler,
    [BACKUP_ENV]: backupEnvHandler,
    enqueue: enqueueHandler,
    'resend-parts': resendPartsHandler,
    applied: appliedHandler,
    stats: statsHandler,
    'dead-letters': deadLettersHandler,
    'pause-apply': pauseApplyHandler,
    [DELETE_PERSON_EVENTS]: deletePersonEventsHandler,
    [EVENTS_SCAN]: scanHandler,
    [EVENTS_GET]: getHandler,
    [EVENTS_VALUES]: valuesHandler,
    [EVENTS_VOLUMES]: volumesHandler,
    [PROPERTY_NAMES]: namesHandler,
    [ANALYTICS_SCAN]: analyticsScanHandler,
    [WEB_SESSIONS_FOLD]: webFoldHandler,
    [WEB_SESSIONS_REDUCE]: webReduceHandler,
    [WEB_SESSIONS_SCAN]: webScanHandler,
    [ANALYTICS_FIRST_EVENT]: firstEventHandler,
    [SEQUENCE_COLLECT]: collectHandler,
    [SEQUENCE_TAKE]: takeHandler,
    [SEQUENCE_FINISH]: finishHandler,
    [PERSON_EVENTS]: personEventsHandler,
    [HOGQL_SCAN]: hogqlScanHandler,
    [EXPORT_OLDEST]: exportOldestHandler,
    [EXPORT_STARTING_POINTS]: exportStartingPointsHandler,
    [EXPORT_PERSONS_POSITION]: exportPersonsPositionHandler,
  });
  // The services hosted through src/worker/service.ts: the composition root is the one place naming them.
  rt.services.add(new RecordingsService(rt.host()));
  rt.services.add(new NotificationScheduler(rt.host(), insightPortOf(rt)));
  rt.metrics.register(rt.services.metrics());
  const debug = data.config.logLevel === 'debug';
  setRequestsWaitingProbe(() => rt.shared.interactiveWaiting(data.index));
  const heartbeat = new Heartbeat(rt.shared, data.index);
  const memoryRelief = data.config.memoryMb > 0 ? new MemoryRelief(rt) : null;

  // A library promise nobody awaits (lmdb-js rejects internal commit promises when a disk is full) must not kill
  // the thread: the operation that failed has already answered 503 or will retry.
  process.on('unhandledRejection', (reason) => rt.log.error(`unhandled rejection: ${(reason as Error)?.stack ?? reason}`));
  // An async query's work stops once its status record says cancelled, whichever worker the DELETE reached.
  onCancelCheck((team, id) => readStatus(rt, team, id)?.cancelled === true);

  // An uncaught exception ends the thread, but only after its LMDB environments are closed (src/worker/fatal-exit.ts).
  installFatalExit(async () => {
    port?.ignoreRequests();
    abandonQueries();
    await rt.close({ fatal: true });
  }, rt.log);

  /**
   * Start-up in two steps, each run on every worker before the next begins (src/front/front.ts): open the shards
   * (from then on they drain their rings and peers may call them), then replay the logs, which hands replayed
   * records to other workers' shards too.
   */
  let opened: Promise<void> | null = null;
  function openShards(): Promise<void> {
    opened ??= (async () => {
      rt.meta.env.resetReadTxn();
      rt.cache.invalidate({ projects: true });
      const layout = rt.meta.layout();
      if (!layout) throw new Error('open before bootstrap: no data-directory layout');
      await rt.ingest.openShards(layout.shardCount);
      rt.shardsOpened();
    })();
    return opened;
  }
  let initialised: Promise<void> | null = null;
  function initialise(): Promise<void> {
    initialised ??= openShards().then(() => rt.services.start(rt.ingest.shardCount)).then(() => rt.ingest.recoverShards()).then(() => rt.retention.start()).then(() => {
      rt.flagUsageFlusher.start();
      rt.scheduledChanges.start();
      rt.services.recovered();
    }).then(() => void rt.export?.start());
    return initialised;
  }
  // A thread started after start-up replaces one that died: nothing will send it `open` and `recover`, so it runs them itself.
  if (rt.shared.started) {
    rt.log.info('replacement thread: reopening shards');
    initialise().then(
      () => {
        rt.peers.announceRestart();
        return rt.ingest.recoverAsReplacement();
      },
      (error: unknown) => rt.log.error(`re-initialisation failed: ${(error as Error)?.stack ?? error}`),
    );
  }

  /**
   * Every private-API operation runs under a query budget (src/worker/query-budget.ts): whatever long work it
   * starts, on any worker, stops at its deadline or memory bound. Analyses also pass the gate that bounds how many
   * run at once. Ingestion and flag evaluation do no sliced work and skip both.
   */
  async function runItem(item: TaskItem): Promise<Reply> {
    const handler = OPS[item.op];
    if (!handler) return errorReply(Errors.server(`unknown operation ${item.op}`));
    const timed = TIMED.has(item.op) ? rt.metrics.insightSeconds.startTimer({ query: item.op }) : null;
    heartbeat.begin(item);
    try {
      if (item.principal === null) return await handler(item, rt);
      const budget = budgetFor(requestedTimeoutS(item, data.config.queryTimeoutS), data.config.queryMemoryMb);
      const run = async () => withBudget(budget, () => handler(item, rt));
      return await (isAnalysis(item.op) ? rt.queries.run(run) : run());
    } catch (error) {
      rt.metrics.noteQueryError(error);
      return replyForThrown(error, item.op, (m) => rt.log.error(m));
    } finally {
      heartbeat.end(item);
      timed?.();
    }
  }

  async function runControl(task: ControlTask): Promise<unknown> {
    switch (task.control) {
      case 'serve': {
        port?.close();
        port = new RequestPort(task.port, runItem, async () => {
          if (initialised) await initialised;
        }, debug, (requests, interactive) => {
          rt.pacer.noteRequest(requests, interactive);
          if (interactive > 0) rt.shared.startedInteractive(data.index, interactive);
        }, (m) => rt.log.error(m), () => rt.pacer.interactive);
        rt.log.debug('checking every request from the front against the protocol schema');
        return port.done;
      }
      case 'bootstrap':
        return bootstrap(rt);
      case 'open':
        await openShards();
        return true;
      case 'recover':
        await initialise();
        return true;
      case 'auth-snapshot':
        return authSnapshot(rt);
      case 'flags-state':
        return flagStreamState(rt, task.projectId);
      case 'shutdown':
        port?.close();
        memoryRelief?.close();
        abandonQueries();
        await rt.close();
        return true;
    }
  }

  let port: RequestPort | null = null;
  return runControl;
}
