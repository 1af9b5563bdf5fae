package shared

import (
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/submit"
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
	return submit.New(submit.Options{YARN: yc, Hadoop: hc, Logger: f.Logger(), Login: conn.RM.Kerberos.Options, Getenv: f.Env.Getenv})
}
