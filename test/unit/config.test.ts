// The configuration loader: defaults, environment overrides, and the test-only switches off unless set.
import t from 'tap';
import { loadConfig } from '../../src/config/load-config.js';

t.test('defaults: the documented bounds, and every test-only switch off', async (t) => {
  const config = loadConfig({});
  t.match(config, { backlogHigh: 4_000_000, logSegmentMb: 64, durabilityTrace: false, faultInjection: false, logLevel: 'info' });
  t.ok(Object.isFrozen(config));
});

t.test('environment overrides are parsed by type and validated', async (t) => {
  const config = loadConfig({ QUILL_BACKLOG_HIGH: '100', QUILL_LOG_SEGMENT_MB: '0.25', QUILL_DURABILITY_TRACE: '1', QUILL_FAULT_INJECTION: 'true' });
  t.match(config, { backlogHigh: 100, logSegmentMb: 0.25, durabilityTrace: true, faultInjection: true });
  t.throws(() => loadConfig({ QUILL_BACKLOG_HIGH: 'lots' }), /invalid configuration: QUILL_BACKLOG_HIGH/);
  t.throws(() => loadConfig({ QUILL_BACKLOG_HIGH: '0' }), /invalid configuration: QUILL_BACKLOG_HIGH/);
  t.throws(() => loadConfig({ QUILL_LOG_SEGMENT_MB: '0' }), /invalid configuration: QUILL_LOG_SEGMENT_MB/);
});
