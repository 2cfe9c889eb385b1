# multi run as a Nomad task: three named worker nodes per allocation.
#
#   nomad job run workers.nomad.hcl
#   nomad alloc exec -task workers <alloc> multi status --all
#
# Nomad sends kill_signal (SIGINT by default; multi run treats INT as TERM)
# and kills after kill_timeout (5 s by default): kill_timeout must exceed
# multi run's --timeout, so that multi kills what is left, reports it and
# frees every lock first.
job "workers" {
  datacenters = ["dc1"]
  type        = "service"

  group "workers" {
    count = 2

    restart {
      attempts = 3
      interval = "5m"
      delay    = "15s"
      mode     = "delay"
    }

    task "workers" {
      driver = "docker"

      config {
        image   = "registry.example.com/app:1.0"
        command = "multi"
        args    = ["run", "w1", "w2", "w3", "--timeout=20s", "--", "/srv/app/bin/worker", "--name=%n"]
      }

      env {
        MULTI_RUNDIR = "/run/multi"
      }

      kill_signal  = "SIGTERM"
      kill_timeout = "25s"

      resources {
        cpu    = 500
        memory = 256
      }
    }
  }
}
