// Package kerberos is yarn-er's Kerberos login: a gokrb5 client from a keytab or a credential
// cache (Login), and the words for what a failed Kerberos exchange means and how to fix it
// (Explain). The REST client's SPNEGO (package yarn), the HDFS staging and token calls (package
// stage, over internal/ipc/gss), the ApplicationMaster's token refresh and the CLI log in through
// it; nothing else of yarn-er imports gokrb5's client.
package kerberos
