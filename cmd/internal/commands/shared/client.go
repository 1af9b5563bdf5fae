package shared

import (
	"errors"
	"io"

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

// SubmitError is the command error for what Client.Submit returned: a refused preflight prints
// its table to w and is a findings error (exit 3) whose summary starts with what (e.g.
// "submit"), a bad request is a usage error (exit 2), and anything else is returned as it is
// (nil stays nil).
func SubmitError(w io.Writer, what string, err error) error {
	var pe *submit.PreflightError
	switch {
	case errors.As(err, &pe):
		_ = WritePreflightTable(w, pe.Report, false)
		return &cmdutil.FindingsError{Summary: what + ": " + pe.Error()}
	case errors.Is(err, submit.ErrRequest):
		return &cmdutil.UsageError{Err: err}
	}
	return err
}
