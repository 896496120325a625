/**
 * A standalone S3-compatible server for the dev cluster: s3rver (a
 * development dependency of this checkout) on one address and port,
 * objects in a directory, one bucket. Run as its own process by
 * `aenv dev cluster up --store s3`:
 * `node s3-runner.js DIR ADDRESS PORT BUCKET`. Stops on SIGTERM.
 *
 * @module
 */
const [dir, address, port, bucket] = process.argv.slice(2);
if (dir === undefined || address === undefined || port === undefined || bucket === undefined) {
  process.stderr.write('usage: s3-runner DIR ADDRESS PORT BUCKET\n');
  process.exit(2);
}
const { default: S3rver } = await import('s3rver');
const server = new S3rver({
  address,
  port: Number(port),
  silent: true,
  directory: dir,
  configureBuckets: [{ name: bucket, configs: [] }],
});
await server.run();
process.stdout.write(`s3rver ready on ${address}:${port}\n`);
const stop = (): void => {
  void server.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
