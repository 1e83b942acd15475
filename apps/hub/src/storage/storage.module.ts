import { Global, Module } from '@nestjs/common';
import { DataDir } from './data-dir.js';

@Global()
@Module({ providers: [DataDir], exports: [DataDir] })
export class StorageModule {}
