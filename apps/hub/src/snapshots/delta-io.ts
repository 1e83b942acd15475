/** What the delta worker (`delta.worker.ts`) receives and answers. */
export interface DeltaInput {
  /** The two whole files; workerData copies them into the worker. */
  readonly base: Uint8Array;
  readonly target: Uint8Array;
}

export interface DeltaOutput {
  readonly gzip: Uint8Array;
  readonly bytes: number;
  readonly pages: number;
  readonly pageCount: number;
}

export type DeltaMessage =
  | { readonly ok: true; readonly output: DeltaOutput }
  | { readonly ok: false; readonly error: string };
