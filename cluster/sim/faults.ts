// Faults on demand, for tests of the harness's resilience (test API and admin endpoint).
import { z } from 'zod';

export const FaultRequestSchema = z.discriminatedUnion('fault', [
  z.object({ fault: z.literal('drop-watches') }),
  z.object({ fault: z.literal('expire-next-watch') }),
  z.object({ fault: z.literal('delay-events'), ms: z.int().min(0).max(60_000) }),
  z.object({ fault: z.literal('fail-next-delete'), namespace: z.string(), name: z.string() }),
  z.object({ fault: z.literal('ignore-sigterm'), namespace: z.string(), name: z.string() }),
]);
export type FaultRequest = z.infer<typeof FaultRequestSchema>;

export class Faults {
  expireNextWatch = false;
  readonly failNextDelete = new Set<string>();
  readonly ignoreSigterm = new Set<string>();

  static key(namespace: string, name: string): string {
    return `${namespace}/${name}`;
  }

  takeDeleteFailure(namespace: string, name: string): boolean {
    return this.failNextDelete.delete(Faults.key(namespace, name));
  }

  takeWatchExpiry(): boolean {
    const expire = this.expireNextWatch;
    this.expireNextWatch = false;
    return expire;
  }
}
