// Many pods on one sim created and deleted at once, each reached through port-forward while the same
// process opens more port-forwards (each a local listener on a kernel-picked port, as the harness's
// are): every answer must come from the pod it was sent to, as on a real node where each pod has its
// own network namespace.
import { spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { portTarget, type ServedPod } from '../../cluster/sim/kubelet-server.ts';
import type { ContainerRecord } from '../../cluster/sim/kuberuntime.ts';
import { HOST_PORT_COUNT, NodePorts } from '../../cluster/sim/ports.ts';
import { ContainerProcess } from '../../cluster/sim/runtime.ts';
import type { PortForwardHandle } from '../../harness/kube/index.ts';
import { repoRoot, spawnTs } from '../support/processes.ts';
import { forwardTo, isReady, labPod, startSimClient, watchPod, type SimClient } from '../support/sim.ts';

const PODS = 16;
const ROUNDS = 6;
/** Port-forwards opened while the round's pods start: each is a listen(0), as the harness's are. */
const FORWARDS_WHILE_STARTING = 300;

let c: SimClient;
beforeAll(async () => {
  c = await startSimClient();
});
afterAll(async () => {
  await c?.sim.stop();
});

async function answeredBy(port: number): Promise<string> {
  const res = await request(`http://127.0.0.1:${port}/work?ms=1`);
  await res.body.dump();
  return String(res.headers['x-pod-uid']);
}

describe('port-forward under many pods at once', () => {
  it('reaches only the pod it was sent to', async () => {
    const anchor = await c.core.createNamespacedPod({ namespace: 'default', body: labPod('anchor') });
    const anchorWatch = await watchPod(c.kc, 'default', 'anchor', anchor.metadata!.resourceVersion);
    await anchorWatch.waitFor(isReady, 'anchor Ready');
    anchorWatch.stop();
    const wrong: string[] = [];
    const nameOf = new Map([[anchor.metadata!.uid!, 'anchor']]);
    let answers = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const names = Array.from({ length: PODS }, (_, i) => `r${round}-p${i}`);
      const created = await Promise.all(
        names.map((name) => c.core.createNamespacedPod({ namespace: 'default', body: labPod(name, { grace: 1 }) })),
      );
      for (const pod of created) nameOf.set(pod.metadata!.uid!, pod.metadata!.name!);
      // Listeners opened while the pods are scheduled and started, held until the round ends.
      const decoys: PortForwardHandle[] = await Promise.all(
        Array.from({ length: FORWARDS_WHILE_STARTING }, () => forwardTo(c.kc, 'default', 'anchor', 8080)),
      );
      await Promise.all(
        created.map(async (pod) => {
          const name = pod.metadata!.name!,
            uid = pod.metadata!.uid!;
          const where = async () => {
            const hostPort = (await c.core.readNamespacedPod({ name, namespace: 'default' })).spec!.containers[0]!
              .ports![0]!.hostPort;
            return `host port ${hostPort}${decoys.some((d) => d.localPort === hostPort) ? ", also a port-forward's local port" : ''}`;
          };
          const watch = await watchPod(c.kc, 'default', name, pod.metadata!.resourceVersion);
          const seen = await watch.waitFor(
            (e) => isReady(e) || e.pod.status?.phase === 'Failed' || e.pod.status?.phase === 'Succeeded',
            `${name} Ready`,
          );
          watch.stop();
          if (!isReady(seen)) {
            wrong.push(
              `${name} (${uid}) never became Ready (${await where()}): ${JSON.stringify(seen.pod.status?.containerStatuses?.[0]?.state)}`,
            );
            return;
          }
          const forward = await forwardTo(c.kc, 'default', name, 8080);
          try {
            const by = await answeredBy(forward.localPort);
            answers++;
            if (by !== uid)
              wrong.push(
                `${name}: sent to ${uid}, answered as ${by} (${nameOf.get(by) ?? 'no pod'}; ${await where()})`,
              );
          } catch (error) {
            wrong.push(`${name} (${uid}): ${(error as Error).message} ${forward.errors.join('; ')}`);
          } finally {
            await forward.close();
          }
        }),
      );
      await Promise.all(decoys.map((d) => d.close()));
      await Promise.all(names.map((name) => c.core.deleteNamespacedPod({ name, namespace: 'default' })));
    }
    console.log(`port-reuse answers: ${answers}`);
    console.log(`port-reuse wrong: ${wrong.length}`);
    expect(wrong).toEqual([]);
  }, 300_000);
});

describe("the node's host ports", () => {
  it('gives no port twice while it is held, across two nodes in one process, and none from the ephemeral range', async () => {
    const nodes = [new NodePorts(), new NodePorts()];
    const picks = await Promise.all(Array.from({ length: 400 }, (_, i) => nodes[i % 2]!.reserve()));
    console.log(`port-reuse reserved: ${picks.length}, distinct: ${new Set(picks).size}`);
    expect(new Set(picks).size).toBe(picks.length);
    const range = '/proc/sys/net/ipv4/ip_local_port_range';
    // macOS's default first ephemeral port where Linux's /proc is absent.
    const ephemeralLow = existsSync(range) ? Number(readFileSync(range, 'utf8').split(/\s+/)[0]) : 49152;
    expect(picks.filter((p) => p >= ephemeralLow)).toEqual([]);
    // Released, they are free to be given again.
    for (const node of nodes) node.release(picks);
    expect(await nodes[0]!.reserve()).toBeGreaterThan(0);
  });

  it('gives none that a node in another process holds, and the kernel frees them when that process ends', async () => {
    // A third of the range held there: a node blind to them would pick ~100 of its 300 among them.
    const count = Math.floor(HOST_PORT_COUNT / 3);
    const other = spawnTs('test/support/hold-ports.ts', [String(count)]);
    try {
      const held = (await other.waitForEvent((e) => e.event === 'held', "the other process's ports", 60_000))
        .ports as number[];
      const node = new NodePorts();
      const picks = await Promise.all(Array.from({ length: 300 }, () => node.reserve()));
      const taken = new Set(held);
      console.log(
        `port-reuse held elsewhere: ${taken.size}, picked here: ${picks.length}, among them: ${picks.filter((p) => taken.has(p)).length}`,
      );
      expect(taken.size).toBe(count);
      expect(picks.filter((p) => taken.has(p))).toEqual([]);
      node.release(picks);
    } finally {
      other.child.kill('SIGKILL');
    }
    await other.exited;
    // Killed without releasing: each of its stand-ins can be bound again at once.
    const ports = (other.events.find((e) => e.event === 'held')!.ports as number[]).slice(0, 20);
    const bound = await Promise.all(
      ports.map(
        (port) =>
          new Promise<boolean>((resolve) => {
            const socket = createSocket('udp4');
            socket.once('error', () => {
              socket.close();
              resolve(false);
            });
            socket.bind({ port, address: '127.0.0.1', exclusive: true }, () => socket.close(() => resolve(true)));
          }),
      ),
    );
    expect(bound).toEqual(ports.map(() => true));
  }, 90_000);

  it("reaches a container's port until every process told to listen there has ended, before the PLEG sees it", async () => {
    // Published at 24567; both are told so (PORT), as two containers of the lab's image are, one of them
    // running another command. Neither binds it: the processes only stand for the containers'.
    const started = (name: string) => {
      const running = new ContainerProcess(['/bin/sh', '-c', 'echo up; exec sleep 60'], { PORT: '24567' });
      const record = {
        process: running,
        image: { entrypoint: [], paths: {}, env: {}, portEnv: 'PORT' },
        env: { PORT: '24567' },
        spec: { name },
        startedAt: '',
        exitSeen: false,
      } as unknown as ContainerRecord;
      return new Promise<ContainerRecord>((resolve) => {
        const stop = running.follow((line) => {
          if (line?.text === 'up') {
            stop();
            resolve(record);
          }
        });
      });
    };
    const [listener, other] = await Promise.all([started('lab'), started('other')]);
    const served: ServedPod = {
      pod: {
        uid: 'u',
        namespace: 'default',
        name: 'p',
        hostPorts: new Map([[8080, 24567]]),
        containers: new Map([
          ['lab', listener!],
          ['other', other!],
        ]),
      },
      done: false,
    };
    expect(portTarget(served, 8080)).toEqual({ host: '127.0.0.1', port: 24567 });
    other!.process.signal('SIGKILL');
    await other!.process.exited;
    expect(portTarget(served, 8080)).toEqual({ host: '127.0.0.1', port: 24567 });
    listener!.process.signal('SIGKILL');
    await listener!.process.exited;
    // The pod is not done (the PLEG has not relisted): in its own network the port is closed all the same.
    expect(portTarget(served, 8080)).toBeUndefined();
  });

  it('says a node out of file descriptors is, not that no port is free', async () => {
    // Each held port takes a descriptor: 80 run out before 200 ports are held.
    const out = spawnSync(
      '/bin/sh',
      ['-c', 'ulimit -n 80 && exec "$0" --import tsx test/support/hold-ports.ts 200', process.execPath],
      { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 },
    );
    expect(out.status).not.toBe(0);
    // The error's own line (Node shows the source line that threw above it).
    expect(out.stderr).toMatch(/^Error: cannot (hold|check) host port \d+ on 127\.0\.0\.1: .*EMFILE/m);
    expect(out.stderr).not.toMatch(/^Error: no free host port/m);
  }, 90_000);
});
