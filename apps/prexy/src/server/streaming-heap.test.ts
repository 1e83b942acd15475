import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { STREAMING_HEAP_FLAGS, streamingHeapArgs } from './streaming-heap.js';

describe('streamingHeapArgs', () => {
  const node = '/usr/bin/node';

  it('adds the heap flags before the node options and the script it was started with', () => {
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
      '--initial-old-space-size=64',
      '--no-memory-reducer',
      '--enable-source-maps',
      '/app/main.js',
      '--config',
      'p.json',
    ]);
  });

  it('leaves a semi-space size the user chose, on the command line or in NODE_OPTIONS', () => {
    const added = (execArgv: string[], nodeOptions?: string) =>
      streamingHeapArgs(node, execArgv, [node, 'm.js'], nodeOptions)?.slice(1, -1);
    const rest = ['--initial-old-space-size=64', '--no-memory-reducer'];
    expect(added(['--max-semi-space-size=8'])).toEqual([...rest, '--max-semi-space-size=8']);
    expect(added(['--max-semi-space-size', '8'], '')).toEqual([
      ...rest,
      '--max-semi-space-size',
      '8',
    ]);
    expect(
      added(rest, '--inspect --max-semi-space-size=16 --initial-old-space-size=256'),
    ).toBeUndefined();
  });

  it('leaves the memory reducer as the user set it, either way and in either spelling', () => {
    for (const flag of ['--memory-reducer', '--no-memory-reducer', '--no_memory_reducer'])
      expect(
        streamingHeapArgs(
          node,
          ['--max-semi-space-size=2', '--initial-old-space-size=64'],
          [node, 'm.js'],
          flag,
        ),
      ).toBeUndefined();
  });

  it('is a no-op once applied (the re-executed process runs as it is)', () => {
    const args = streamingHeapArgs(node, [], [node, 'm.js'], undefined) ?? [];
    const execArgv = args.slice(1, -1);
    expect(execArgv).toEqual(STREAMING_HEAP_FLAGS);
    expect(streamingHeapArgs(node, execArgv, [node, 'm.js'], undefined)).toBeUndefined();
  });

  it('has nothing to add to what `npm start` runs', () => {
    const manifest = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { scripts: { start: string } };
    const [, ...execArgv] = manifest.scripts.start.split(' ');
    expect(streamingHeapArgs(node, execArgv, [node, 'dist/main.js'], undefined)).toBeUndefined();
  });
});
