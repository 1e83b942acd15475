import { describe, expect, it } from 'vitest';
import { streamingHeapArgs } from './streaming-heap.js';

describe('streamingHeapArgs', () => {
  const node = '/usr/bin/node';

  it('adds the semi-space flag before the node options and the script it was started with', () => {
    expect(
      streamingHeapArgs(
        node,
        ['--enable-source-maps'],
        [node, '/app/main.js', '--config', 'p.json'],
        undefined,
      ),
    ).toEqual([
      node,
      '--max-semi-space-size=2',
      '--enable-source-maps',
      '/app/main.js',
      '--config',
      'p.json',
    ]);
  });

  it('leaves a size the user chose, on the command line or in NODE_OPTIONS', () => {
    expect(
      streamingHeapArgs(node, ['--max-semi-space-size=8'], [node, 'm.js'], undefined),
    ).toBeUndefined();
    expect(
      streamingHeapArgs(node, ['--max-semi-space-size', '8'], [node, 'm.js'], ''),
    ).toBeUndefined();
    expect(
      streamingHeapArgs(node, [], [node, 'm.js'], '--inspect --max-semi-space-size=16'),
    ).toBeUndefined();
  });

  it('is a no-op once applied (the re-executed process runs as it is)', () => {
    const args = streamingHeapArgs(node, [], [node, 'm.js'], undefined) ?? [];
    const execArgv = args.slice(1, -1);
    expect(streamingHeapArgs(node, execArgv, [node, 'm.js'], undefined)).toBeUndefined();
  });
});
