// The container and service files (no container engine on this machine): the Dockerfile, compose.yaml and the
// systemd unit are parsed and their essentials checked; the unit's command line is run as systemd would run it
// (its environment, its working directory mapped onto this checkout) and must start Quill, pass the image's
// HEALTHCHECK command, and drain on the unit's KillSignal.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { logLines, removeDir, ROOT } from '../helpers/quill.js';

interface Instruction { op: string; args: string }

/** Dockerfile instructions: comments dropped, `\` continuations joined. */
function dockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += line.slice(0, -1) + ' ';
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    const m = /^(\w+)\s+(.*)$/.exec(full);
    if (!m) throw new Error(`not an instruction: ${full}`);
    out.push({ op: m[1]!.toUpperCase(), args: m[2]! });
  }
  return out;
}

/** A systemd unit's settings per section, repeated keys kept in order. */
function unitFile(text: string): Map<string, [string, string][]> {
  const sections = new Map<string, [string, string][]>();
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) {
      section = header[1]!;
      sections.set(section, []);
      continue;
    }
    const kv = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (!kv || !section) throw new Error(`not a unit setting: ${line}`);
    sections.get(section)!.push([kv[1]!, kv[2]!]);
  }
  return sections;
}

const instructions = dockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const stages: Instruction[][] = [];
for (const ins of instructions) (ins.op === 'FROM' ? stages.push([ins]) : stages[stages.length - 1]!.push(ins));
const final = stages[stages.length - 1]!;
const healthcheck = final.find((i) => i.op === 'HEALTHCHECK')!;
/** The exec-form command of the HEALTHCHECK (`CMD [...]`). */
const healthcheckCommand = JSON.parse(/\bCMD\s+(\[.*\])$/.exec(healthcheck.args)![1]!) as string[];

t.test('Dockerfile: multi-stage Node 20 slim, non-root, data volume, health check, SIGTERM', async (t) => {
  t.ok(stages.length >= 2, 'multi-stage');
  for (const stage of stages) t.match(stage[0]!.args, /^node:20(\.\d+)*-\S*slim(\s+AS\s+\w+)?$/i, `${stage[0]!.args}: Node 20, slim`);
  const buildRuns = stages[0]!.filter((i) => i.op === 'RUN').map((i) => i.args).join(' && ');
  t.match(buildRuns, /npm install/, 'the build stage installs as the README does');
  t.match(buildRuns, /npm run build/, 'and builds as npm start does');
  t.ok(final.some((i) => i.op === 'COPY' && i.args.includes('--from=')), 'the final stage copies from the build stage');
  const user = final.filter((i) => i.op === 'USER').pop();
  t.ok(user && !/^(root|0)(:|$)/.test(user.args), `runs as ${user?.args}, not root`);
  t.match(final.find((i) => i.op === 'VOLUME')?.args, /"\/data"/, 'the data directory is a volume');
  const env = final.filter((i) => i.op === 'ENV').map((i) => i.args).join(' ');
  t.match(env, /QUILL_DATA_DIR=\/data\b/, 'Quill keeps its data in the volume');
  t.match(env, /QUILL_HOST=0\.0\.0\.0\b/, 'and listens on the container\'s interfaces');
  t.match(healthcheck.args, /--interval=\S+ .*\bCMD\b/, 'a health check');
  t.ok(healthcheckCommand.join(' ').includes('/_health'), 'on /_health');
  t.equal(final.find((i) => i.op === 'STOPSIGNAL')?.args, 'SIGTERM');
  t.same(JSON.parse(final.find((i) => i.op === 'CMD')!.args), ['node', 'dist/src/main.js'], 'starts the built server as npm start does');
  for (const copy of stages[0]!.filter((i) => i.op === 'COPY')) {
    for (const source of copy.args.split(/\s+/).slice(0, -1)) t.ok(existsSync(join(ROOT, source)), `COPY source ${source} exists`);
  }
  const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
  for (const entry of ['node_modules', 'dist', 'data']) t.ok(ignored.includes(entry), `.dockerignore keeps ${entry} out of the build context`);
});

t.test('compose.yaml: the image, the port, volumes, SIGTERM with time to drain', async (t) => {
  const compose = parseYaml(readFileSync(join(ROOT, 'compose.yaml'), 'utf8')) as any;
  const quill = compose.services.quill;
  t.equal(quill.build, '.');
  t.ok(quill.ports.includes('8000:8000'));
  t.ok(quill.volumes.some((v: string) => v.endsWith(':/data')), 'the data volume is mounted on /data');
  t.ok(quill.volumes.some((v: string) => v.endsWith(':/backups')) && quill.environment.QUILL_BACKUP_DIR === '/backups', 'backups go to their own volume');
  for (const v of quill.volumes as string[]) t.ok(v.split(':')[0]! in compose.volumes, `${v}: a named volume declared at the top`);
  t.equal(quill.stop_signal, 'SIGTERM');
  t.match(quill.stop_grace_period, /^\d+s$/);
});

t.test('systemd unit: its command line starts Quill, which passes the image health check and drains on KillSignal', async (t) => {
  const unit = unitFile(readFileSync(join(ROOT, 'deploy/quill.service'), 'utf8'));
  const service = new Map<string, string[]>();
  for (const [k, v] of unit.get('Service')!) service.set(k, [...(service.get(k) ?? []), v]);
  t.ok(unit.get('Install')?.some(([k, v]) => k === 'WantedBy' && v === 'multi-user.target'));
  t.notOk(['root', '0'].includes(service.get('User')?.[0] ?? 'root'), 'runs as its own user');
  t.equal(service.get('KillSignal')?.[0], 'SIGTERM');
  t.equal(service.get('Type')?.[0], 'simple');
  const env: Record<string, string> = {};
  for (const assignment of service.get('Environment') ?? []) {
    const eq = assignment.indexOf('=');
    env[assignment.slice(0, eq)] = assignment.slice(eq + 1);
  }
  const stateDir = `/var/lib/${service.get('StateDirectory')?.[0]}`;
  t.equal(env.QUILL_DATA_DIR, stateDir, 'the data directory is the unit\'s StateDirectory');
  t.equal(env.QUILL_HOST, '127.0.0.1', 'behind a reverse proxy by default');
  const [executable, ...args] = service.get('ExecStart')![0]!.split(/\s+/);
  t.ok(executable!.startsWith('/'), 'systemd wants an absolute executable');

  // Run it as systemd would, with the unit's environment, on this checkout and a fresh data directory.
  const dataDir = mkdtempSync(join(tmpdir(), 'quill-unit-'));
  t.teardown(() => removeDir(dataDir));
  const node = existsSync(executable!) ? executable! : process.execPath;
  const proc = spawn(node, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env, QUILL_DATA_DIR: dataDir, QUILL_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start:\n${out}`)), 30_000);
    proc.stdout.on('data', () => {
      const start = logLines(out).find((l) => l.event === 'start');
      if (start) {
        clearTimeout(timer);
        resolve(start.port as number);
      }
    });
    void exited.then(() => reject(new Error(`exited before listening:\n${out}`)));
  });
  t.equal((await fetch(`http://127.0.0.1:${port}/_health`)).status, 200);

  // The image's HEALTHCHECK command, against this server, and against a port where nothing listens.
  const [hcProgram, ...hcArgs] = healthcheckCommand;
  t.equal(hcProgram, 'node');
  t.equal(spawnSync(process.execPath, hcArgs, { env: { ...process.env, QUILL_PORT: String(port) } }).status, 0, 'healthy');
  t.equal(spawnSync(process.execPath, hcArgs, { env: { ...process.env, QUILL_PORT: '1' } }).status, 1, 'unhealthy when nothing answers');

  proc.kill(service.get('KillSignal')![0] as NodeJS.Signals);
  t.equal(await exited, 0, 'drains and exits 0 on the unit\'s KillSignal');
  t.ok(logLines(out).some((l) => l.event === 'stop'), 'and says so');
});
