export declare const ROOT: string;
export declare const BUNDLE: string;
export declare const INPUTS: string;
export declare const LAB_SERVER: string;
export declare const SIM_EDGE: string;
export declare const PROXY_WORKER: string;
export declare function staleReason(): string | null;
export declare function buildBundle(options?: { prune?: boolean }): Promise<string>;
export declare function freshBundle(): Promise<string>;
