// The credentials every signed call uses (aws-http.ts). Lambda always puts the function role's credentials in
// the environment, so the SDK's provider chain (profiles, SSO, STS web identity, container and instance
// metadata: ~90 KB minified) would be dead weight in every function. The local stack sets them in its
// environment; the bot CLI's --aws resolves the usual chain once and sets them (bin/bot.ts).
import type { AwsCredentialIdentity } from '@smithy/types';

export const defaultProvider = () => async (): Promise<AwsCredentialIdentity> => {
  const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_CREDENTIAL_EXPIRATION } = process.env;
  if (!AWS_ACCESS_KEY_ID || !AWS_SECRET_ACCESS_KEY) throw new Error('AWS credentials are not in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)');
  return {
    accessKeyId: AWS_ACCESS_KEY_ID,
    secretAccessKey: AWS_SECRET_ACCESS_KEY,
    ...(AWS_SESSION_TOKEN && { sessionToken: AWS_SESSION_TOKEN }),
    ...(AWS_CREDENTIAL_EXPIRATION && { expiration: new Date(AWS_CREDENTIAL_EXPIRATION) }),
  };
};
