/**
 * The part of the WebAssembly JavaScript API the scan kernel uses. Node provides the global;
 * TypeScript declares it only in its DOM and web-worker libraries, which would declare a browser
 * everywhere else in this package.
 */
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array);
  }
  class Memory {
    constructor(descriptor: { initial: number; maximum?: number });
    readonly buffer: ArrayBuffer;
  }
  class Instance {
    constructor(module: Module, imports: Record<string, Record<string, Memory>>);
    readonly exports: Record<string, unknown>;
  }
}
