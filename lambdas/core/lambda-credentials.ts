// Bundled in place of @aws-sdk/credential-provider-node (lib/bundling.ts). Lambda always puts the function
// role's credentials in the environment, so the SDK's whole provider chain (profiles, SSO, STS web identity,
// container and instance metadata: ~90 KB minified, in every function) is dead weight there. Local runs and
// the CLI (tsx, not bundled) keep the SDK's full chain.
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
