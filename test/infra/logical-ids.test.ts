// Every stateful resource and every function keeps its logical ID: CloudFormation replaces a resource whose ID
// changes, and the table, buckets, secret and dead-letter queues are retained (the table deletion-protected),
// so a refactor that renamed one would orphan it and start empty. Changing this list is a migration, on purpose.
import { template } from '../support/shapes';

const PINNED: Record<string, string[]> = {
  'AWS::DynamoDB::Table': ['TableCD117FA1'],
  // Web holds only what each deploy writes (stack-web.ts), pinned all the same.
  'AWS::S3::Bucket': ['AccessLogs8B620ECA', 'Files8E6940B8', 'Web3C8945DB'],
  'AWS::SecretsManager::Secret': ['JwtSecretB8834B39'],
  'AWS::SQS::Queue': [
    'PublisherDlq085B5D78',
    'PublisherRedoDlqBC7BCC10',
    'PublisherRedoQueueAC7121F4',
    'TaskDlq81AD84E9',
    'TaskQueueF51BE51C',
    'UploadCompleterDlq109485AA',
    'WebhookDispatcherDlq46CC53FD',
    'WebhookDispatcherRedoDlq81C88D11',
    'WebhookDispatcherRedoQueueD85157A0',
    'WebhookDlqAEF195B3',
    'WebhookQueueA9D318EA',
    'WebhookSlowQueue43345862',
  ],
  'AWS::Lambda::Function': [
    'AnswerMessageFn0BCD4ED3',
    'BotCreateMessageFnCF5D5579',
    'BotCreateUploadFnFAFB0090',
    'BotDeleteUserFn0A75BFE4',
    'BotEditMessageFn0AFAD26E',
    'BotExportUserFn632D66FC',
    'BotFindUserFn5C552E76',
    'BotGetTaskFnE0F513A2',
    'BotGetUserFn24DFA569',
    'BotListChatsFnEA89B132',
    'BotListMessagesFnEC255F42',
    'BotMarkReadFnAA38BAF6',
    'BotTypingFn0A37553A',
    'BotUploadFileFnC0A8CF68',
    // CDK's handler that sets the bucket's notification configuration (its ID is CDK's, fixed).
    'BucketNotificationsHandler050a0587b7544547bf325f094a3db8347ECC3691',
    'CreateChatFnD8BC4E9C',
    'CreateMessageFn2879BB61',
    'CreateSessionFn4070FE14',
    'CreateUploadFnFC5660F7',
    // CDK's handler that copies the web build into its bucket on deploys (its ID is CDK's, fixed).
    'CustomCDKBucketDeployment8693BB64968944B69AAFB0CC9EB8756C81C01536',
    'GetFileFn728F6295',
    'ListChatsFn8BBC1B7E',
    'ListMessagesFnD6515307',
    'MarkReadFn65879050',
    'NotFoundFn3439B965',
    'PublisherFn3B9693C0',
    'TaskWorkerFnE2062BCA',
    'UploadCompleterFn0C902AA4',
    'UploadFileFn6181BF6F',
    'WebhookDelivererFn25B1B64E',
    'WebhookDispatcherFn0F2649E9',
    'WsConnectFnB17D99F3',
    'WsDefaultFn14DA6159',
    'WsDisconnectFn9523C1B1',
  ],
};

let resources: Record<string, { Type: string; DeletionPolicy?: string }>;
beforeAll(async () => (resources = (await template('Defaults')).Resources));

test.each(Object.keys(PINNED))('%s: the logical IDs are the pinned ones', (type) => {
  const ids = Object.entries(resources)
    .filter(([, r]) => r.Type === type)
    .map(([id]) => id)
    .sort();
  expect(ids).toEqual(PINNED[type]);
});

test('every retained resource is pinned', () => {
  const retained = Object.entries(resources).filter(([, r]) => r.DeletionPolicy === 'Retain' || r.DeletionPolicy === 'Snapshot');
  expect(retained.filter(([id, r]) => !PINNED[r.Type]?.includes(id)).map(([id, r]) => `${r.Type} ${id}`)).toEqual([]);
});
