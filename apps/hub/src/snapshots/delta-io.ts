/** What the delta worker (`delta.worker.ts`) receives and answers. */
export interface DeltaInput {
  /** The two snapshot files, content-addressed by the hashes beside them. */
  readonly basePath: string;
  readonly baseSha256: string;
  readonly targetPath: string;
  readonly targetSha256: string;
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
