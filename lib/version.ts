import { PACKAGE_VERSION } from './package-root.ts';

export const HARNESS_VERSION: string = PACKAGE_VERSION;
