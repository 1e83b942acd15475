/** This package's version: in the User-Agent of its requests and on its telemetry scope. */
export const WAF_CLIENT_VERSION = '0.1.0';
