// Package discovery finds the GPUs and FPGAs of this host and hands them out so that no device is ever
// given to two processes at once.
//
// Discovery runs a chain of backends per vendor and takes the first one that is available:
//
//   - NVIDIA: NVML (go-nvml, only in cgo builds on Linux), then the driver's
//     /proc/driver/nvidia/gpus/*/information files, then nvidia-smi.
//   - AMD: the KFD topology in /sys/class/kfd, then amd-smi.
//   - Intel FPGA: DFL (/sys/class/fpga_region), OPAE (/sys/class/fpga), then "aocl diagnose".
//   - Xilinx FPGA: PCI functions of vendor 0x10ee in /sys/bus/pci/devices.
//
// Every file is read below a host root (see [Root]) and every tool is run through a [Runner], so that tests
// and benchmarks run against fake trees and fake tools. The visibility variables CUDA_VISIBLE_DEVICES,
// NVIDIA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES are honoured, and devices whose
// nodes this process cannot open are skipped.
//
// Coordination ([Coordinator]) keeps devices apart between processes of one host: a ledger, guarded by
// flock(2) on a lock file that is never replaced, records for each held device the owning process (pid,
// start time, boot id, PID namespace), so dead owners are reclaimed and live ones are never robbed; and
// per-device lock files let a workload hold devices for exactly as long as it lives (exec mode). Both
// modes see each other's holdings.
//
// The package imports no other yarn-er package, never prints and never exits.
package discovery
