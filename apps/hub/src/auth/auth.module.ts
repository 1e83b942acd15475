import { Global, Module } from '@nestjs/common';
import { AdminGuard } from './admin.guard.js';
import { FailureLimiter } from './failure-limiter.js';
import { SessionController } from './session.controller.js';
import { SessionsService } from './sessions.service.js';
import { SiteKeyGuard } from './site-key.guard.js';

@Global()
@Module({
  controllers: [SessionController],
  providers: [FailureLimiter, SessionsService, AdminGuard, SiteKeyGuard],
  exports: [FailureLimiter, SessionsService, AdminGuard, SiteKeyGuard],
})
export class AuthModule {}
