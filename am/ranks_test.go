package am

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/records"
)

func cid(t testing.TB, s string) records.ContainerID {
	t.Helper()
	id, err := records.ParseContainerID(s)
	require.NoError(t, err)
	return id
}

func TestRecordNamesReadBack(t *testing.T) {
	id := cid(t, "container_e17_1700000000000_0001_01_000007")
	name := launchRecord(3, 2, 1, id)
	assert.Equal(t, "rank-3.launch-2.failures-1.container_e17_1700000000000_0001_01_000007", name)
	hist, ignored := readRecords(4, []string{name, doneRecord(1)})
	assert.Empty(t, ignored)
	assert.Equal(t, rankHistory{launch: 2, failures: 1, container: id}, hist[3])
	assert.True(t, hist[1].done)
	assert.Equal(t, rankHistory{}, hist[0])
}

func TestReadRecords(t *testing.T) {
	c5 := "container_1700000000000_0001_01_000005"
	c9 := "container_1700000000000_0001_01_000009"
	for _, tc := range []struct {
		name    string
		entries []string
		want    []rankHistory
		ignored []string
	}{
		{"none", nil, []rankHistory{{}, {}}, nil},
		{"the newest launch wins, in any order",
			[]string{"rank-0.launch-2.failures-1." + c9, "rank-0.launch-1.failures-0." + c5},
			[]rankHistory{{launch: 2, failures: 1, container: cid(t, c9)}, {}}, nil},
		{"done besides a launch",
			[]string{"rank-1.launch-1.failures-0." + c5, "rank-1.done"},
			[]rankHistory{{}, {launch: 1, container: cid(t, c5), done: true}}, nil},
		{"hostile and foreign entries are ignored",
			[]string{"rank-2.done", "rank--1.done", "rank-0.launch-0.failures-0." + c5, "rank-0.launch-1.failures-0.container_x",
				"rank-01.done", "rank-0.launch-1." + c5, "rank-0", "notes.txt", "rank-0.launch-1.failures-x." + c5,
				"rank-9999999999.done", "rank-0.launch-+1.failures-0." + c5, "rank-0.bogus"},
			[]rankHistory{{}, {}},
			[]string{"rank-2.done", "rank--1.done", "rank-0.launch-0.failures-0." + c5, "rank-0.launch-1.failures-0.container_x",
				"rank-01.done", "rank-0.launch-1." + c5, "rank-0", "notes.txt", "rank-0.launch-1.failures-x." + c5,
				"rank-9999999999.done", "rank-0.launch-+1.failures-0." + c5, "rank-0.bogus"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hist, ignored := readRecords(2, tc.entries)
			assert.Equal(t, tc.want, hist)
			assert.Equal(t, tc.ignored, ignored)
		})
	}
}

func TestPlanAdoption(t *testing.T) {
	c := func(s string) amrm.Container { return amrm.Container{ID: cid(t, s), Node: "n:1"} }
	c2, c3, c4, c7 := c("container_1_0001_01_000002"), c("container_1_0001_01_000003"), c("container_1_0001_01_000004"), c("container_1_0001_01_000007")
	hist := []rankHistory{
		{launch: 1, container: c2.ID},              // running, handed over: adopted
		{launch: 2, failures: 1, container: c3.ID}, // its container was not handed over: lingering
		{launch: 1, container: c4.ID, done: true},  // done; its container still listed: given back
		{}, // never launched: started as usual
	}
	a := planAdoption(hist, []amrm.Container{c2, c4, c7})
	assert.Equal(t, map[int]amrm.Container{0: c2}, a.adopted)
	assert.Equal(t, map[int]records.ContainerID{1: c3.ID}, a.lingering)
	assert.Equal(t, []int{2}, a.done)
	assert.Equal(t, []amrm.Container{c4, c7}, a.unknown, "containers that run no recorded rank")

	none := planAdoption([]rankHistory{{}, {}}, nil)
	assert.Empty(t, none.adopted)
	assert.Empty(t, none.lingering)
	assert.Empty(t, none.done)
	assert.Empty(t, none.unknown)
}

func TestFileStagingRecords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "application_1_0001")
	require.NoError(t, os.Mkdir(dir, 0o700))
	st := fileStaging(dir)
	ctx := context.Background()
	got, err := st.Records(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "no record yet")
	require.NoError(t, st.Record(ctx, "rank-0.done"))
	require.NoError(t, st.Record(ctx, "rank-0.done"), "again: no error")
	require.NoError(t, st.Record(ctx, "rank-1.launch-1.failures-0.container_1_0001_01_000002"))
	got, err = st.Records(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"rank-0.done", "rank-1.launch-1.failures-0.container_1_0001_01_000002"}, got)
	for _, bad := range []string{"", ".", "..", "a/b", "../x", "a\\b", "a\x00b"} {
		assert.Error(t, st.Record(ctx, bad), "%q", bad)
	}
	assert.NoDirExists(t, filepath.Join(filepath.Dir(dir), "x"))
}

// FuzzReadRecords: any listing of the record directory is read without a panic, every entry is
// either taken or ignored, and a taken launch names a container id that reads back.
func FuzzReadRecords(f *testing.F) {
	f.Add("rank-3.launch-2.failures-1.container_e17_1700000000000_0001_01_000007", "rank-3.done", 4)
	f.Add("rank-0.launch-1.failures-0.container_1_1_01_000002", "rank-01.done", 1)
	f.Add("rank-.launch-.failures-.", "rank-4294967296.done", 2)
	f.Fuzz(func(t *testing.T, a, b string, n int) {
		n = n % 64
		if n < 0 {
			n = -n
		}
		hist, ignored := readRecords(n, []string{a, b})
		require.Len(t, hist, n)
		require.LessOrEqual(t, len(ignored), 2)
		for _, h := range hist {
			if h.launch > 0 {
				_, err := records.ParseContainerID(h.container.String())
				require.NoError(t, err)
			}
		}
	})
}
