// WebAssembly text to bytes with wabt (a devDependency: only this script and the test use it).
import wabt from 'wabt';

/** The binary module of `text`; throws with wabt's message (line and column) on an error. */
export async function compileScanWat(text) {
  const toolkit = await wabt();
  const parsed = toolkit.parseWat('scan.wat', text);
  try {
    parsed.validate();
    return parsed.toBinary({}).buffer;
  } finally {
    parsed.destroy();
  }
}
