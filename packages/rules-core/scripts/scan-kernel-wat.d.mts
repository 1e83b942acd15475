/** The binary module of the WebAssembly text `text` (see scan-kernel-wat.mjs). */
export function compileScanWat(text: string): Promise<Uint8Array>;
