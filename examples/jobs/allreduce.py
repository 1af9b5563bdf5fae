"""A torch.distributed all-reduce over gloo: each rank adds its rank + 1; every rank checks the sum."""
import json
import os
import sys

import torch
import torch.distributed as dist


def main() -> int:
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world)
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    want = world * (world + 1) / 2
    host = os.uname().nodename
    print(f"rank {rank}/{world} on {host} (master {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}, "
          f"node rank {os.environ['NODE_RANK']}, local rank {os.environ['LOCAL_RANK']}/{os.environ['LOCAL_WORLD_SIZE']}): "
          f"all_reduce sum {t.item()} want {want}", flush=True)
    out = os.environ.get("RESULT_DIR")
    if out:
        with open(os.path.join(out, f"rank-{rank}.json"), "w") as f:
            json.dump({"rank": rank, "world": world, "sum": t.item(), "host": host, "nm_port": os.environ.get("NM_PORT"),
                       "master": f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}", "node_rank": os.environ["NODE_RANK"],
                       "local_rank": os.environ["LOCAL_RANK"], "peers": open(os.environ["YARN_ER_PEERS"]).read().splitlines()}, f)
    dist.barrier()
    dist.destroy_process_group()
    return 0 if t.item() == want else 1


if __name__ == "__main__":
    sys.exit(main())
