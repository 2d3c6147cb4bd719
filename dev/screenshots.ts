// tsx dev/screenshots.ts [--runs DIR] — the screenshots of docs/img/: the default, sidecar and retries reports, each
// from a real run on the simulated cluster (termlab run --sim), and the verify report, from a real `termlab verify
// --sim` of docs/verify.md's example, taken in headless Chromium; and edge-timeline.png, the edge picture of the
// real node's recording through the real Traefik (the report's figure alone, with the report's style). Run by hand, not by npm test. --runs DIR keeps the
// runs in DIR (default, sidecar, retries, verify) and reuses any already there; each report is drawn again from its
// observations by `termlab grade` before its screenshot. --only NAME takes that one alone (edge-timeline needs no run).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TermlabError } from '../lib/errors.ts';
import { PACKAGE_ROOT as repoRoot } from '../lib/package-root.ts';
import { devArgs, runDevTool } from './entry.ts';

const tool = { name: 'screenshots', usage: 'tsx dev/screenshots.ts [--runs DIR] [--only NAME]' };

/** Each report: the command that runs it into a folder, what `termlab grade` draws it from, how tall a window shows it. */
const REPORTS = [
  ...[
    ['default', 'manifests/scenarios.yaml'],
    ['sidecar', 'manifests/sidecars.yaml'],
    ['retries', 'manifests/retries.yaml'],
  ].map(([name, scenarios]) => ({
    name: name!,
    run: (dir: string) => ['run', '--sim', '--scenarios', scenarios!, '--output-dir', dir],
    graded: (dir: string) => dir,
    height: 1500,
  })),
  {
    // docs/verify.md's example: the failing manifest, rolled with load on it.
    name: 'verify',
    run: (dir: string) => [
      'verify',
      'deployment/web',
      '--sim',
      '--apply',
      'manifests/verify-example.yaml',
      '--path',
      '/work?ms=200',
      '--output-dir',
      dir,
    ],
    graded: (dir: string) => join(dir, 'web.verification.json'),
    height: 1300,
  },
];

/** Figures cut from a report: a recorded observation, and where its figure starts and ends in the report's HTML. */
const FIGURES = [
  {
    name: 'edge-timeline',
    graded: 'test/grade/fixtures/edge/node-edge-no-prestop.observation.json',
    figure: /<h3 id="[^"]*-edge">[\s\S]*?<p class="caption">[\s\S]*?<\/p>/,
    height: 520,
  },
];

function shoot(chromium: string, html: string, png: string, height: number): void {
  const shot = spawnSync(
    chromium,
    [
      '--headless',
      '--no-sandbox',
      '--hide-scrollbars',
      `--screenshot=${png}`,
      `--window-size=1000,${height}`,
      `file://${html}`,
    ],
    { stdio: 'ignore' },
  );
  if (shot.status !== 0 || !existsSync(png))
    throw new TermlabError('SETUP_FAILED', `${chromium} ended ${shot.status} without writing ${png}`);
  console.log(`screenshots: ${png} (${Math.round(statSync(png).size / 1024)} KB)`);
}

/** Draws the report again with this checkout's grader (a kept run's report may come from older code). */
function grade(graded: string, html: string): void {
  spawnSync(process.execPath, [join(repoRoot, 'bin/termlab.js'), 'grade', graded, '--html', html], {
    cwd: repoRoot,
    stdio: 'ignore',
  });
  if (!existsSync(html)) throw new TermlabError('SETUP_FAILED', `termlab grade wrote no ${html}`);
}

await runDevTool(tool, () => {
  const { values } = devArgs(tool, { runs: { type: 'string' }, only: { type: 'string' } });
  const names = [...REPORTS, ...FIGURES].map((r) => r.name);
  if (values.only !== undefined && !names.includes(values.only))
    throw new TermlabError('USAGE', `--only: no screenshot "${values.only}" (one of ${names.join(', ')})`);
  const wanted = (r: { name: string }) => values.only === undefined || values.only === r.name;
  const runs = values.runs ?? mkdtempSync(join(tmpdir(), 'termlab-screenshots-'));
  const chromium = ['chromium', 'chromium-browser', 'google-chrome'].find(
    (c) => spawnSync(c, ['--version'], { stdio: 'ignore' }).status === 0,
  );
  if (!chromium) throw new TermlabError('SETUP_FAILED', 'no chromium on PATH (apt-get install chromium)');
  const out = join(repoRoot, 'docs/img');
  mkdirSync(out, { recursive: true });
  for (const r of REPORTS.filter(wanted)) {
    const dir = join(runs, r.name);
    if (!existsSync(join(dir, 'report.html'))) {
      const args = r.run(dir);
      console.log(`screenshots: termlab ${args.join(' ')} (on the simulated cluster)`);
      const run = spawnSync(process.execPath, [join(repoRoot, 'bin/termlab.js'), ...args], {
        cwd: repoRoot,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      // A run whose verdicts differ (or a verify that fails) still writes its report: only a missing one is a failure here.
      if (!existsSync(join(dir, 'report.html')))
        throw new TermlabError('SETUP_FAILED', `termlab ${args[0]} ended ${run.status} with no report in ${dir}`);
    }
    const html = join(dir, 'screenshot.html');
    grade(r.graded(dir), html);
    shoot(chromium, html, join(out, `report-${r.name}.png`), r.height);
  }
  for (const f of FIGURES.filter(wanted)) {
    const dir = join(runs, f.name);
    mkdirSync(dir, { recursive: true });
    const report = join(dir, 'report.html');
    grade(join(repoRoot, f.graded), report);
    const text = readFileSync(report, 'utf8');
    const figure = f.figure.exec(text)?.[0];
    if (!figure) throw new TermlabError('SETUP_FAILED', `${report} has no ${f.name} figure`);
    // The figure alone, in the report's own style and card: a screenshot shows a window's top, not an anchor.
    const style = /<style>[\s\S]*?<\/style>/.exec(text)![0];
    const html = join(dir, 'figure.html');
    writeFileSync(
      html,
      `<!doctype html><html lang="en"><head><meta charset="utf-8">${style}</head><body><section class="card v-matches-model">${figure}</section></body></html>`,
    );
    shoot(chromium, html, join(out, `${f.name}.png`), f.height);
  }
});
