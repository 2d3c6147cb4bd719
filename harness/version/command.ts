// `termlab version`: the harness's version and the Kubernetes minors the grader's kubelet model knows.
import type { CommandModule } from '../../lib/command.ts';
import { formatted, isData } from '../../lib/output-format.ts';
import { HARNESS_VERSION } from '../../lib/version.ts';
import { KNOWN_MINORS, NEWEST_MINOR } from '../grade/theory.ts';
import type { versionFlags } from './flags.ts';

export const versionCommand: CommandModule<typeof versionFlags> = {
  async run(values, _positionals, io) {
    const versions = { termlab: HARNESS_VERSION, kubernetesMinors: KNOWN_MINORS, newestMinor: NEWEST_MINOR };
    io.out(
      isData(values.output)
        ? formatted(versions, values.output)
        : `termlab ${HARNESS_VERSION}\nthe grader's kubelet model knows Kubernetes ${KNOWN_MINORS.join(', ')}\n(a newer cluster is graded with the ${NEWEST_MINOR} rules)\n`,
    );
    return 0;
  },
};
