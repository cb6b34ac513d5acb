// How the ClickHouse export shares its worker's thread (src/worker/export/background.ts): it gives way to flag and
// API traffic, saturated CPUs and the apply's backlog, keeping a share that grows with its own lag.
import t from 'tap';
import { exportShare, foregroundBusy, type Foreground } from '../../src/worker/export/background.js';

const foreground = (f: Partial<Foreground>): Foreground => ({ interactive: false, contended: false, applying: false, exportLagS: 0, ...f });

t.test('the export gives way to traffic, saturated CPUs and the apply backlog, and to nothing else', async (t) => {
  t.equal(foregroundBusy(foreground({})), false, 'an idle node: the export runs freely');
  t.equal(foregroundBusy(foreground({ exportLagS: 1_000 })), false, 'however far behind it is');
  t.equal(foregroundBusy(foreground({ interactive: true })), true, 'flags or API requests arriving');
  t.equal(foregroundBusy(foreground({ contended: true })), true, 'acknowledgements competing for the CPUs');
  t.equal(foregroundBusy(foreground({ applying: true })), true, 'the apply working through a backlog');
});

t.test('giving way to ingestion, its share grows with its lag, to all of the thread at five minutes', async (t) => {
  const share = (exportLagS: number) => exportShare(foreground({ applying: true, contended: true, exportLagS }));
  t.equal(share(0), 0.1, 'a tenth at once');
  t.equal(share(-5), 0.1, 'a clock step back is no lag');
  t.equal(share(150), 0.55, 'half way');
  t.equal(share(300), 1);
  t.equal(share(3_600), 1, 'never more than the thread');
  for (let lag = 0; lag < 300; lag += 30) t.ok(share(lag + 30) > share(lag), `rising at ${lag} s`);
});

t.test('while flags or API requests arrive, a fifth of the thread whatever its lag', async (t) => {
  for (const exportLagS of [0, 60, 600]) t.equal(exportShare(foreground({ interactive: true, applying: true, exportLagS })), 0.2, `lag ${exportLagS} s`);
});
