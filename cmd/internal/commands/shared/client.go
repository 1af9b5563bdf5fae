package shared

import (
	"strings"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/stage"
	"github.com/yarn-er/yarn-er/submit"
	"github.com/yarn-er/yarn-er/yarn"
)

// NewSubmitClient builds the client of package submit from the cluster flags; needHadoop makes a
// missing Hadoop configuration a usage error (submitting needs it; following, by submit and app,
// does not).
func NewSubmitClient(f *cmdutil.Factory, conn *cmdutil.ClusterConn, needHadoop bool) (*submit.Client, error) {
	hc, err := conn.HadoopConfig()
	if err != nil {
		return nil, err
	}
	if hc == nil && needHadoop {
		return nil, cmdutil.Usagef("no Hadoop configuration: submit needs the cluster's (fs.defaultFS, the scheduler address): give --hadoop-conf DIR or set HADOOP_CONF_DIR")
	}
	yc, err := conn.RMClient()
	if err != nil {
		return nil, err
	}
	opts := submit.Options{YARN: yc, Hadoop: hc, Logger: f.Logger()}
	if hc != nil && strings.EqualFold(strings.TrimSpace(hc.Get(stage.KeyAuthentication)), "kerberos") && yc.KerberosClient() == nil {
		// A Kerberos HDFS behind a ResourceManager whose REST API is not Kerberized: staging
		// still needs the login (--keytab/--principal, --krb5-ccache or the default cache).
		krb, err := yarn.NewKerberosClient(conn.RM.Kerberos, f.Env.Getenv, f.Logger())
		switch {
		case err == nil:
			opts.Stage.Kerberos = krb
		case needHadoop:
			return nil, err
		default:
			f.Logger().Warn("no Kerberos login for HDFS: staging directories cannot be removed", "err", err)
		}
	}
	return submit.New(opts)
}
