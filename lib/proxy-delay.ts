// `--proxy-sync-delay-ms`: one setting, one name and one check for `termlab sim`, `run --sim` and `verify --sim`.
import { TermlabError } from './errors.ts';

/** A minute: far beyond any real kube-proxy's sync, short enough to notice a typo. */
export const MAX_PROXY_SYNC_DELAY_MS = 60_000;

/** The flag's milliseconds (undefined when not given); anything but a whole number 0-60000 is refused. */
export function proxySyncDelayMs(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) > MAX_PROXY_SYNC_DELAY_MS)
    throw new TermlabError(
      'USAGE',
      `--proxy-sync-delay-ms: expected a whole number of milliseconds 0-${MAX_PROXY_SYNC_DELAY_MS}, got ${JSON.stringify(text)}`,
      { flag: '--proxy-sync-delay-ms' },
    );
  return Number(text);
}
