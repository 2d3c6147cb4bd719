import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';

describe('termlab scenarios', () => {
  it('shows the setup but no outcome, exit code or kill time until --reveal', async () => {
    const hidden = await runCli(['scenarios']);
    expect(hidden.code).toBe(0);
    expect(hidden.stdout).toContain(
      'short-grace  (graceful, preStop exec sleep 3s, grace 5s, work 10s, delete after 1s)',
    );
    expect(hidden.stdout).not.toMatch(/\b(completed|cut|137|143|17|SIGKILL|SIGTERM|exit \d|exits)\b/i);
    const json = await runCli(['scenarios', '-o', 'json']);
    expect(json.stdout).not.toMatch(/prediction|killAt|exitCode|outcome|SIGKILL|137/);
    expect(JSON.parse(json.stdout)).toHaveLength(8);

    const revealed = await runCli(['scenarios', '--reveal']);
    expect(revealed.stdout).toMatch(/short-grace[\s\S]*model: cut, exit 137 — .*SIGKILL at 5s/);
    expect(JSON.parse((await runCli(['scenarios', '--reveal', '-o', 'json'])).stdout)[1].prediction).toMatchObject({
      outcome: 'cut',
      exitCode: 137,
    });
  });
});
