// Starts the S3 emulator (@20minutes/s3rver) in this process, storing objects under a folder.
import { mkdirSync } from 'node:fs';
import S3rver from '@20minutes/s3rver';

export interface LocalS3 {
  endpoint: string;
  stop(): Promise<void>;
}

export async function startS3(host: string, port: number, directory: string, bucket: string): Promise<LocalS3> {
  mkdirSync(directory, { recursive: true });
  const server = new S3rver({
    address: host,
    port,
    directory,
    silent: true,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  await server.run();
  return {
    endpoint: `http://localhost:${port}`,
    stop: () => server.close(),
  };
}
