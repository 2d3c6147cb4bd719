// tsx dev/screenshots.ts [--runs DIR] — the screenshots of docs/img/: the default, sidecar and retries reports, each
// from a real run on the simulated cluster (termlab run --sim), taken in headless Chromium. Run by hand, not by
// npm test. --runs DIR keeps the runs in DIR (default, sidecar, retries) and reuses any already there; each report is
// drawn again from its observations by `termlab grade` before its screenshot.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TermlabError } from '../lib/errors.ts';
import { PACKAGE_ROOT as repoRoot } from '../lib/package-root.ts';
import { devArgs, runDevTool } from './entry.ts';

const tool = { name: 'screenshots', usage: 'tsx dev/screenshots.ts [--runs DIR]' };

/** Each report: the scenario file it runs, and how tall a window shows its table and first timelines. */
const REPORTS = [
  { name: 'default', scenarios: 'manifests/scenarios.yaml', height: 1500 },
  { name: 'sidecar', scenarios: 'manifests/sidecars.yaml', height: 1500 },
  { name: 'retries', scenarios: 'manifests/retries.yaml', height: 1500 },
];

await runDevTool(tool, () => {
  const { values } = devArgs(tool, { runs: { type: 'string' } });
  const runs = values.runs ?? mkdtempSync(join(tmpdir(), 'termlab-screenshots-'));
  const chromium = ['chromium', 'chromium-browser', 'google-chrome'].find(
    (c) => spawnSync(c, ['--version'], { stdio: 'ignore' }).status === 0,
  );
  if (!chromium) throw new TermlabError('SETUP_FAILED', 'no chromium on PATH (apt-get install chromium)');
  const out = join(repoRoot, 'docs/img');
  mkdirSync(out, { recursive: true });
  for (const r of REPORTS) {
    const dir = join(runs, r.name);
    if (!existsSync(join(dir, 'report.html'))) {
      console.log(`screenshots: running ${r.scenarios} on the simulated cluster into ${dir}`);
      const run = spawnSync(
        process.execPath,
        [join(repoRoot, 'bin/termlab.js'), 'run', '--sim', '--scenarios', r.scenarios, '--output-dir', dir],
        { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] },
      );
      // A run whose verdicts differ still writes its report: only a missing report is a failure here.
      if (!existsSync(join(dir, 'report.html')))
        throw new TermlabError('SETUP_FAILED', `termlab run ended ${run.status} with no report in ${dir}`);
    }
    // Drawn again by this checkout's grader: a kept run's report may come from older code.
    const html = join(dir, 'screenshot.html');
    spawnSync(process.execPath, [join(repoRoot, 'bin/termlab.js'), 'grade', dir, '--html', html], {
      cwd: repoRoot,
      stdio: 'ignore',
    });
    if (!existsSync(html)) throw new TermlabError('SETUP_FAILED', `termlab grade wrote no ${html}`);
    const png = join(out, `report-${r.name}.png`);
    const shot = spawnSync(
      chromium,
      [
        '--headless',
        '--no-sandbox',
        '--hide-scrollbars',
        `--screenshot=${png}`,
        `--window-size=1000,${r.height}`,
        `file://${html}`,
      ],
      { stdio: 'ignore' },
    );
    if (shot.status !== 0 || !existsSync(png))
      throw new TermlabError('SETUP_FAILED', `${chromium} ended ${shot.status} without writing ${png}`);
    console.log(`screenshots: ${png} (${Math.round(statSync(png).size / 1024)} KB)`);
  }
});
