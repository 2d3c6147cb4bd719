// containerd 2.4's configuration for the node: version 4, the CRI plugin's v2 names, every socket the node's own.
import { describe, expect, it } from 'vitest';
import { containerdConfig, PAUSE_IMAGE } from '../../dev/node/configs.ts';
import { containerdBuilds } from '../../dev/node/containerd.ts';
import { paths } from '../../dev/node/layout.ts';

describe("the node's containerd", () => {
  const toml = containerdConfig('overlayfs');

  it('is configured in version 4, with the listeners as server plugins on its own sockets', () => {
    expect(toml).toMatch(/^version = 4\n/);
    expect(toml).toContain(`[plugins.'io.containerd.server.v1.grpc']\n  address = "${paths.containerdSocket}"`);
    // Left out, version 4's ttrpc listener would take /run/containerd/containerd.sock.ttrpc.
    expect(toml).toContain(`[plugins.'io.containerd.server.v1.ttrpc']\n  address = "${paths.containerdSocket}.ttrpc"`);
    expect(toml).not.toMatch(/^\[grpc\]/m);
    expect(toml).not.toContain('/run/containerd/');
  });

  it('keeps the CRI settings the machine needs, under the v2 plugin names', () => {
    expect(toml).not.toContain('io.containerd.grpc.v1.cri');
    expect(toml).toContain('[plugins.\'io.containerd.cri.v1.images\']\n  snapshotter = "overlayfs"');
    expect(toml).toContain(`sandbox = "${PAUSE_IMAGE}"`);
    expect(toml).toContain('restrict_oom_score_adj = true');
    expect(toml).toContain('SystemdCgroup = false');
    expect(toml).toContain('bin_dirs = ["/usr/lib/cni"]');
    expect(toml).toContain(`conf_dir = "${paths.cniConf}"`);
  });

  it('is built as its Makefile builds it: version stamped, no btrfs, a static shim without gRPC', () => {
    const builds = containerdBuilds('v2.4.2');
    const shim = builds.find((b) => b.output.endsWith('containerd-shim-runc-v2'))!;
    expect(shim.cgo).toBe(false);
    expect(shim.args.join(' ')).toContain('no_grpc');
    const daemon = builds.find((b) => b.output.endsWith('/containerd'))!;
    expect(daemon.args.join(' ')).toContain('-X github.com/containerd/containerd/v2/version.Version=v2.4.2');
    expect(daemon.args.join(' ')).toContain('no_btrfs');
  });
});
