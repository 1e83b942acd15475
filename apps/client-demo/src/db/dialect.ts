/** The two databases the demo runs on. */
export type Dialect = 'sqlite' | 'postgres';
