// IAM in moto through its query API (no IAM client in the project's dependencies): users with an inline
// policy and an access key. Called while moto is open (before enforceAuth), so the request needs no real
// signature, only a credential scope naming the service, which moto's server routes by.
export interface Keys {
  accessKeyId: string;
  secretAccessKey: string;
}

async function iamCall(endpoint: string, params: Record<string, string>): Promise<string> {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
      authorization: 'AWS4-HMAC-SHA256 Credential=AKIASETUP/20260101/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: new URLSearchParams({ ...params, Version: '2010-05-08' }).toString(),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`moto IAM ${params.Action}: ${res.status} ${text}`);
  return text;
}

const tag = (xml: string, name: string) => {
  const m = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  if (!m) throw new Error(`no <${name}> in ${xml}`);
  return m[1];
};

/** A user whose only permissions are this policy document; returns its access key. */
export async function createUser(endpoint: string, name: string, policy: unknown): Promise<Keys> {
  await iamCall(endpoint, { Action: 'CreateUser', UserName: name });
  await putPolicy(endpoint, name, policy);
  const xml = await iamCall(endpoint, { Action: 'CreateAccessKey', UserName: name });
  return { accessKeyId: tag(xml, 'AccessKeyId'), secretAccessKey: tag(xml, 'SecretAccessKey') };
}

/** Replaces the user's inline policy. */
export async function putPolicy(endpoint: string, name: string, policy: unknown): Promise<void> {
  await iamCall(endpoint, { Action: 'PutUserPolicy', UserName: name, PolicyName: 'function', PolicyDocument: JSON.stringify(policy) });
}
